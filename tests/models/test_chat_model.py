"""The Chat Completions adapter: the real openai SDK against the fake Chat Completions API."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from agentls.interfaces import ModelError, PromptTooLong
from agentls.models import providers
from agentls.models.anthropic import MAX_RETRIES, STREAM_RETRIES, ClientCache
from agentls.models.chat import ChatModel, chat_messages
from fake_api import (
    Reply,
    auth_error,
    bad_request,
    hang,
    malformed_tool_use,
    rate_limited,
    reply,
    server_error,
    text,
    tool_use,
)
from fake_api.chat import Dialect, FakeOpenAI

KEY = "sk-openai-test-0123456789"
HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


@pytest.fixture
def chat() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as api:
        yield api
        assert api.errors == []


def model(fake: FakeOpenAI, timeout: float = 120.0, provider: str = "openai") -> ChatModel:
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake.url}
    endpoint = providers.endpoint(provider, fake.url, env)
    return ChatModel(ClientCache().get(endpoint), "gpt-test", 1000, endpoint, env, timeout)


async def ask(fake: FakeOpenAI, messages: list[dict[str, Any]] = HELLO) -> Any:
    pieces: list[str] = []
    turn = await model(fake).respond("system", messages, TOOLS, pieces.append)
    return turn, "".join(pieces)


async def test_streams_text_and_tool_calls_as_request_ready_blocks(chat: FakeOpenAI) -> None:
    chat.script(reply(text("Looking at it now."), tool_use("read_file", {"path": "a.py"}, id="c1")))
    turn, streamed = await ask(chat)
    assert streamed == "Looking at it now."
    assert turn.content == [
        {"type": "text", "text": "Looking at it now."},
        {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.py"}},
    ]
    assert turn.stop_reason == "tool_use" and turn.usage.output > 0
    body = chat.requests[-1].body
    assert body["messages"] == [
        {"role": "system", "content": "system"},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file.",
                "parameters": TOOLS[0]["input_schema"],
            },
        }
    ]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 1000  # OpenAI's own API wants the newer name
    assert chat.requests[-1].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    "dialect",
    [
        Dialect(),
        Dialect(shared_index=True),
        Dialect(shared_index=True, integer_ids=True, repeat_names=True),
    ],
    ids=["index-per-call", "ollama-index-0", "integer-ids-repeated-names"],
)
async def test_parallel_calls_in_every_index_style(dialect: Dialect) -> None:
    with FakeOpenAI(dialect=dialect) as fake:
        fake.script(
            reply(
                tool_use("read_file", {"path": "a.py"}),
                tool_use("read_file", {"path": "b/ü.py"}),
                tool_use("grep", {"pattern": "def \\w+\\(", "path": "."}),
            )
        )
        turn, _ = await ask(fake)
    calls = [b for b in turn.content if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]) for c in calls] == [
        ("read_file", {"path": "a.py"}),
        ("read_file", {"path": "b/ü.py"}),
        ("grep", {"pattern": "def \\w+\\(", "path": "."}),
    ]
    assert len({c["id"] for c in calls}) == 3 and all(isinstance(c["id"], str) for c in calls)


async def test_every_call_is_answered_by_a_tool_message_in_order(chat: FakeOpenAI) -> None:
    """The fake refuses what the real API refuses: an unanswered call, a stray tool message."""
    chat.script(
        reply(tool_use("read_file", {"path": "a.py"}), tool_use("read_file", {"path": "b.py"})),
        "done",
    )
    first, _ = await ask(chat)
    calls = [b for b in first.content if b["type"] == "tool_use"]
    history = [
        *HELLO,
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": calls[0]["id"], "content": "a"},
                {
                    "type": "tool_result",
                    "tool_use_id": calls[1]["id"],
                    "content": "no such file",
                    "is_error": True,
                },
                {"type": "text", "text": "(and hurry)"},
            ],
        },
    ]
    turn, _ = await ask(chat, history)
    assert turn.content == [{"type": "text", "text": "done"}]
    sent = chat.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert sent[2]["tool_calls"][1]["function"] == {
        "name": "read_file",
        "arguments": '{"path": "b.py"}',
    }
    assert sent[4] == {
        "role": "tool",
        "tool_call_id": calls[1]["id"],
        "content": "Error: no such file",
    }
    # An unanswered call is refused by the fake as by the API, so the check is real.
    chat.script("never")
    with pytest.raises(ModelError, match="tool_call_ids did not have response messages"):
        await ask(chat, [*HELLO, {"role": "assistant", "content": first.content}, *HELLO])


@pytest.mark.parametrize(
    "broken",
    [
        reply(text("a long answer that breaks"), drop_after=3),
        reply(text("an answer that ends early"), end_after=3),
        reply(text("Reading."), malformed_tool_use("read_file")),
    ],
    ids=["dropped", "ended-early", "malformed-arguments"],
)
async def test_an_answer_that_breaks_off_is_asked_again(chat: FakeOpenAI, broken: Reply) -> None:
    chat.script(broken, reply(text("whole "), tool_use("read_file", {"path": "a.py"})))
    pieces: list[str] = []
    notices: list[str] = []
    turn = await model(chat).respond(
        "system", HELLO, TOOLS, pieces.append, on_notice=notices.append
    )
    assert turn.stop_reason == "tool_use" and turn.content[-1]["input"] == {"path": "a.py"}
    # The notice is agentls's, never the model's text (a script reading stream-json).
    assert notices == ["The answer broke off; asking again."]
    assert "".join(pieces).endswith("whole ") and "asking again" not in "".join(pieces)
    assert len(chat.requests) == 2 and chat.requests[1].body == chat.requests[0].body


async def test_an_answer_that_keeps_breaking_off_is_a_model_error(chat: FakeOpenAI) -> None:
    chat.script(*[reply(text("breaks"), drop_after=3) for _ in range(STREAM_RETRIES + 1)])
    with pytest.raises(ModelError, match="broke off") as caught:
        await ask(chat)
    assert caught.value.hint == "Run the task again."


async def test_a_stream_without_done_is_complete_once_the_finish_reason_came(
    chat: FakeOpenAI,
) -> None:
    chat.script(reply(text("all of it"), omit_message_stop=True))
    turn, _ = await ask(chat)
    assert (turn.content, turn.stop_reason) == ([{"type": "text", "text": "all of it"}], "end_turn")


async def test_429_with_retry_after_and_500_are_retried_by_the_sdk(chat: FakeOpenAI) -> None:
    chat.script(rate_limited(retry_after_ms=10), server_error(), "made it")
    turn, _ = await ask(chat)
    assert turn.content == [{"type": "text", "text": "made it"}] and len(chat.requests) == 3


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (rate_limited(), f"Still rate limited after {MAX_RETRIES} retries (429)."),
        (server_error(), f"The API failed after {MAX_RETRIES} retries (500)."),
    ],
)
async def test_a_lasting_fault_is_one_clear_message(
    chat: FakeOpenAI, fault: Any, message: str
) -> None:
    chat.script(*[fault] * (MAX_RETRIES + 1))
    with pytest.raises(ModelError) as caught:
        await ask(chat)
    assert str(caught.value) == message and len(chat.requests) == MAX_RETRIES + 1


async def test_a_refused_key_names_the_variable_and_never_shows_the_key(chat: FakeOpenAI) -> None:
    chat.script(auth_error(f"Incorrect API key provided: {KEY}"))
    with pytest.raises(ModelError) as caught:
        await ask(chat)
    assert str(caught.value) == "The API key was refused (401)."
    assert "OPENAI_API_KEY" in caught.value.hint
    chat.script(bad_request(f"bad header {KEY}"))
    with pytest.raises(ModelError) as caught:
        await ask(chat)
    assert KEY not in str(caught.value) and "[redacted]" in str(caught.value)


async def test_a_hung_request_times_out_and_is_retried(chat: FakeOpenAI) -> None:
    chat.script(hang(30), "late but here")
    turn = await model(chat, timeout=0.5).respond("system", HELLO, TOOLS, lambda piece: None)
    assert turn.content == [{"type": "text", "text": "late but here"}]


async def test_an_over_long_prompt_is_prompt_too_long_with_its_size() -> None:
    with FakeOpenAI(context_window=100) as fake:
        fake.script("unreachable")
        with pytest.raises(PromptTooLong) as caught:
            await ask(fake, [{"role": "user", "content": [{"type": "text", "text": "x" * 2000}]}])
    assert caught.value.tokens and caught.value.tokens > 100
    assert "agent.compact" in caught.value.hint


async def test_finish_reason_length_is_max_tokens(chat: FakeOpenAI) -> None:
    chat.script(reply(text("cut"), stop_reason="max_tokens"))
    turn, _ = await ask(chat)
    assert turn.stop_reason == "max_tokens"


@pytest.mark.parametrize("deepseek", [False, True], ids=["cached_tokens", "prompt_cache_hit"])
async def test_cache_hits_are_counted_in_either_field(deepseek: bool) -> None:
    long = [{"role": "user", "content": [{"type": "text", "text": "context " * 1200}]}]
    with FakeOpenAI(dialect=Dialect(deepseek_usage=deepseek)) as fake:
        fake.script("one", "two")
        first, _ = await ask(fake, long)
        second, _ = await ask(fake, long)
    assert first.usage.cache_read == 0 and first.usage.input > 1024
    assert second.usage.cache_read >= 1024 and second.usage.cache_read % 128 == 0
    assert second.usage.prompt == first.usage.prompt
    assert second.usage.input == first.usage.input - second.usage.cache_read


async def test_reasoning_goes_back_within_the_tool_loop_and_is_never_the_answer() -> None:
    with FakeOpenAI(dialect=Dialect(reasoning=True)) as fake:
        fake.script(reply(tool_use("read_file", {"path": "a.py"})), "The answer.")
        first, streamed = await ask(fake)
        (call,) = [b for b in first.content if b["type"] == "tool_use"]
        history = [
            *HELLO,
            {"role": "assistant", "content": first.content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "x"}],
            },
        ]
        # The fake, like DeepSeek's thinking mode, refuses the loop without its reasoning.
        second, _ = await ask(fake, history)
    assert streamed == "" and first.content[0]["type"] == "reasoning"
    assert second.content[-1] == {"type": "text", "text": "The answer."}
    assert "Thinking" in fake.requests[-1].body["messages"][2]["reasoning_content"]
    # A new task's request leaves the finished loop's reasoning out.
    later = chat_messages("s", [*history, {"role": "assistant", "content": second.content}, *HELLO])
    assert not any("reasoning_content" in m for m in later)


def test_the_translation_is_byte_stable_across_steps() -> None:
    """Each request's messages start with the previous request's, unchanged: the prefix an
    automatic cache keys on."""
    history: list[dict[str, Any]] = [*HELLO]
    previous: list[dict[str, Any]] = []
    for step in range(4):
        sent = chat_messages("system", history)
        assert sent[: len(previous)] == previous
        previous = sent
        call = {"type": "tool_use", "id": f"c{step}", "name": "read_file", "input": {"path": "ü"}}
        history.append({"role": "assistant", "content": [{"type": "text", "text": "x"}, call]})
        history.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"c{step}", "content": "y"}],
            }
        )


async def test_a_refused_connection_names_the_endpoint_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="openai")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    env = {"OPENAI_API_KEY": KEY}
    endpoint = providers.endpoint("openai", closed, env)
    chat = ChatModel(ClientCache().get(endpoint), "gpt-test", 1000, endpoint, env, 5.0)
    with pytest.raises(ModelError) as caught:
        await chat.respond("system", HELLO, TOOLS, lambda piece: None)
    assert str(caught.value) == f"Could not reach {closed}: nothing accepts connections there."
    assert "agentls.baseUrl" in caught.value.hint
    # Retrying only makes the user wait for the same answer.
    assert not [r for r in caplog.records if "Retrying request" in r.getMessage()]


async def test_a_refused_request_says_what_the_api_said(chat: FakeOpenAI) -> None:
    chat.script(bad_request("model: unknown model"))
    with pytest.raises(ModelError) as caught:
        await model(chat).respond("system", HELLO, TOOLS, lambda piece: None)
    assert str(caught.value) == "The API refused the request (400): model: unknown model"


async def test_a_password_in_the_base_url_never_shows() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"OPENAI_API_KEY": KEY}
    endpoint = providers.endpoint("openai", f"http://me:hunter2-pass@127.0.0.1:{port}/v1", env)
    chat = ChatModel(ClientCache().get(endpoint), "gpt-test", 1000, endpoint, env, 5.0)
    with pytest.raises(ModelError) as caught:
        await chat.respond("system", HELLO, TOOLS, lambda piece: None)
    assert str(caught.value).startswith(f"Could not reach http://127.0.0.1:{port}/v1: ")
    assert "hunter2" not in providers.describe(endpoint, "m")
