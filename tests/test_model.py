"""The model client: the real SDK against the fake API, errors mapped, secrets kept out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agentls.interfaces import ModelError
from agentls.model import AnthropicModel, ClientCache, with_cache_breakpoints
from fake_api import FakeAnthropic, bad_request, reply, text, tool_use

KEY = "sk-ant-test-0123456789"
HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as api:
        yield api


def model(fake: FakeAnthropic) -> AnthropicModel:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url}
    return AnthropicModel(ClientCache().get(env), "claude-test", 1000, env)


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


async def test_a_stream_cut_midway_is_a_model_error(fake: FakeAnthropic) -> None:
    fake.script(reply(text("a long answer that breaks"), drop_after=3))
    with pytest.raises(ModelError, match="broke off") as caught:
        await model(fake).respond("system", HELLO, [], lambda piece: None)
    assert caught.value.hint == "Run the task again."


async def test_error_messages_never_hold_the_key(fake: FakeAnthropic) -> None:
    fake.script(bad_request(f"invalid header value {KEY}"))
    with pytest.raises(ModelError) as caught:
        await model(fake).respond("system", HELLO, [], lambda piece: None)
    assert KEY not in str(caught.value) and "[redacted]" in str(caught.value)


def test_cache_breakpoints_mark_copies_of_the_newest_messages() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"m{i}"}]} for i in range(4)
    ]
    system, marked = with_cache_breakpoints("prompt", messages)
    assert system == [{"type": "text", "text": "prompt", "cache_control": {"type": "ephemeral"}}]
    assert ["cache_control" in m["content"][-1] for m in marked] == [False, False, True, True]
    assert all("cache_control" not in m["content"][-1] for m in messages)
