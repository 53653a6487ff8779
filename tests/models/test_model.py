"""The model client: the real SDK against the fake API, errors mapped, secrets kept out."""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import pytest
from agentls.interfaces import ModelError, PromptTooLong
from agentls.models import providers
from agentls.models.anthropic import (
    STREAM_RETRIES,
    AnthropicModel,
    ClientCache,
    with_cache_breakpoints,
)
from fake_api import (
    FakeAnthropic,
    Reply,
    bad_request,
    compute_input_usage,
    hang,
    malformed_tool_use,
    reply,
    text,
    tool_use,
    validate_request,
)

KEY = "sk-ant-test-0123456789"
HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def model(fake: FakeAnthropic, timeout: float = 120.0) -> AnthropicModel:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url}
    endpoint = providers.endpoint(None, None, env)
    return AnthropicModel(ClientCache().get(endpoint), "claude-test", 1000, endpoint, env, timeout)


async def test_streams_text_and_returns_request_ready_blocks(fake: FakeAnthropic) -> None:
    fake.script(reply(text("Looking at it."), tool_use("read_file", {"path": "a.py"}, id="t1")))
    pieces: list[str] = []
    turn = await model(fake).respond("system", HELLO, [], pieces.append)
    assert "".join(pieces) == "Looking at it."
    assert turn.content == [
        {"type": "text", "text": "Looking at it."},
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
    ]
    assert turn.stop_reason == "tool_use" and turn.usage.output > 0
    assert fake.requests[-1].body["max_tokens"] == 1000  # the maxTokens setting


@pytest.mark.parametrize(
    "broken",
    [
        reply(text("a long answer that breaks"), drop_after=3),
        reply(text("an answer that ends early"), end_after=3),
        reply(text("Reading."), malformed_tool_use("read_file")),
    ],
    ids=["dropped", "ended-early", "malformed-tool-json"],
)
async def test_an_answer_that_breaks_off_is_asked_again(fake: FakeAnthropic, broken: Reply) -> None:
    fake.script(broken, reply(text("whole "), tool_use("read_file", {"path": "a.py"}, id="t1")))
    pieces: list[str] = []
    notices: list[str] = []
    turn = await model(fake).respond("system", HELLO, [], pieces.append, on_notice=notices.append)
    assert turn.stop_reason == "tool_use" and turn.content[-1]["input"] == {"path": "a.py"}
    # The notice is agentls's, never the model's text (a script reading stream-json).
    assert notices == ["The answer broke off; asking again."]
    assert "".join(pieces).endswith("whole ") and "asking again" not in "".join(pieces)
    assert len(fake.requests) == 2 and fake.requests[1].body == fake.requests[0].body


async def test_an_answer_that_keeps_breaking_off_is_a_model_error(fake: FakeAnthropic) -> None:
    fake.script(*[reply(text("breaks"), drop_after=3) for _ in range(STREAM_RETRIES + 1)])
    with pytest.raises(ModelError, match="broke off") as caught:
        await model(fake).respond("system", HELLO, [], lambda piece: None)
    assert caught.value.hint == "Run the task again."
    assert len(fake.requests) == STREAM_RETRIES + 1


async def test_a_stream_without_message_stop_is_complete_once_the_stop_reason_came(
    fake: FakeAnthropic,
) -> None:
    fake.script(reply(text("all of it"), omit_message_stop=True))
    turn = await model(fake).respond("system", HELLO, [], lambda piece: None)
    assert (turn.content, turn.stop_reason) == ([{"type": "text", "text": "all of it"}], "end_turn")
    assert len(fake.requests) == 1


async def test_a_hung_request_times_out_and_is_retried(fake: FakeAnthropic) -> None:
    fake.script(hang(30), reply(text("late but here")))
    turn = await model(fake, timeout=0.5).respond("system", HELLO, [], lambda piece: None)
    assert turn.content == [{"type": "text", "text": "late but here"}]


async def test_a_prompt_too_long_says_how_long(fake: FakeAnthropic) -> None:
    fake.script(bad_request("prompt is too long: 215000 tokens > 200000 maximum"))
    with pytest.raises(PromptTooLong) as caught:
        await model(fake).respond("system", HELLO, [], lambda piece: None)
    assert caught.value.tokens == 215000 and "agent.compact" in caught.value.hint


async def test_error_messages_never_hold_the_key(fake: FakeAnthropic) -> None:
    fake.script(bad_request(f"invalid header value {KEY}"))
    with pytest.raises(ModelError) as caught:
        await model(fake).respond("system", HELLO, [], lambda piece: None)
    assert KEY not in str(caught.value) and "[redacted]" in str(caught.value)


async def test_a_refused_connection_fails_at_once_and_says_what_to_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": closed}
    endpoint = providers.endpoint(None, None, env)
    unreachable = AnthropicModel(
        ClientCache().get(endpoint), "claude-test", 1000, endpoint, env, 120.0
    )
    caplog.set_level(logging.WARNING)
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await unreachable.respond("system", HELLO, [], lambda piece: None)
    # The SDK's four retries with backoff took 9-12 s for the same answer.
    assert time.monotonic() - started < 5
    assert str(caught.value) == f"Could not reach {closed}: nothing accepts connections there."
    assert "ANTHROPIC_BASE_URL" in caught.value.hint
    # Shown by the front end only: a warning would reach the terminal a second time.
    assert [r for r in caplog.records if r.name.startswith("agentls")] == []


def test_an_endpoint_without_a_scheme_is_refused_with_a_hint() -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "localhost:8080"}
    with pytest.raises(ModelError, match=r"\(localhost:8080\) has no scheme") as caught:
        providers.endpoint(None, None, env)
    assert "ANTHROPIC_BASE_URL" in str(caught.value)
    assert "http://localhost:8080" in caught.value.hint


def test_cache_breakpoints_mark_copies_of_the_newest_messages() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"m{i}"}]} for i in range(4)
    ]
    system, marked = with_cache_breakpoints("prompt", messages)
    assert system == [{"type": "text", "text": "prompt", "cache_control": {"type": "ephemeral"}}]
    assert ["cache_control" in m["content"][-1] for m in marked] == [False, True, False, True]
    assert all("cache_control" not in m["content"][-1] for m in messages)


def _request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    system, marked = with_cache_breakpoints("You are a test agent. " * 300, messages)
    tools = [{"name": "read_file", "input_schema": {"type": "object"}}]
    return {"model": "m", "max_tokens": 10, "system": system, "messages": marked, "tools": tools}


@pytest.mark.parametrize("calls_per_step", [1, 3, 25])
def test_each_step_reads_the_whole_previous_prompt_from_the_cache(calls_per_step: int) -> None:
    """The breakpoints, billed by the fake's rules (20-block look-back, at most 4 marks)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    cached: set[str] = set()
    previous_total = 0
    for step in range(6):
        body = _request(messages)
        assert validate_request(body) is None
        usage, written = compute_input_usage(body, cached)
        cached |= written
        if step:
            # Everything the previous request sent is read, not paid for again.
            assert usage.cache_read_input_tokens == previous_total
            assert usage.input_tokens == 0
        previous_total = usage.total
        ids = [f"s{step}c{n}" for n in range(calls_per_step)]
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": i, "name": "read_file", "input": {"path": i}}
                    for i in ids
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": "x" * 800} for i in ids
                ],
            }
        )


async def test_a_refused_request_says_what_the_api_said(fake: FakeAnthropic) -> None:
    fake.script(bad_request("model: unknown model"))
    with pytest.raises(ModelError) as caught:
        await model(fake).respond("system", HELLO, [], lambda piece: None)
    # The API's message, not the SDK's "Error code: 400 - {'type': 'error', ...}".
    assert str(caught.value) == "The API refused the request (400): model: unknown model"
