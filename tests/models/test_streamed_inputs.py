"""Long tool inputs streamed in small pieces, as a model writing a big file sends them: the
real SDKs against the fakes, both wire formats. The answer must be whole and arrive in time
linear in its size (the SDK's own accumulator re-parsed the whole input at every piece)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from agentls.models import providers
from agentls.models.anthropic import AnthropicModel, ClientCache
from agentls.models.chat import ChatAnswer, ChatModel
from agentls.models.message_stream import MessageAnswer, StreamError
from fake_api import FakeAnthropic, Reply, reply, text, tool_use
from fake_api.chat import FakeOpenAI

HELLO = [{"role": "user", "content": [{"type": "text", "text": "write it"}]}]
TWO_MB = "".join(f'line {n:07d}: {"é" if n % 7 else "x"} "q" \\ tab\t\n' for n in range(80_000))
PIECE = 100
"""Characters per delta: small, as a model sends them (the fake's default is three pieces)."""


@pytest.fixture
def chat() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as api:
        yield api
        assert api.errors == []


def anthropic_model(fake: FakeAnthropic) -> AnthropicModel:
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-0123456789", "ANTHROPIC_BASE_URL": fake.url}
    endpoint = providers.endpoint(None, None, env)
    return AnthropicModel(ClientCache().get(endpoint), "claude-test", 1000, endpoint, env, 120.0)


def chat_model(fake: FakeOpenAI) -> ChatModel:
    env = {"OPENAI_API_KEY": "sk-openai-test-0123456789", "OPENAI_BASE_URL": fake.url}
    endpoint = providers.endpoint("openai", fake.url, env)
    return ChatModel(ClientCache().get(endpoint), "gpt-test", 1000, endpoint, env, 120.0)


def _write(piece_chars: int) -> Reply:
    arguments = {"path": "big.txt", "content": TWO_MB}
    call = tool_use("write_file", arguments, "w1", piece_chars=piece_chars)
    return reply(text("Writing it."), call)


async def test_a_2_mb_write_file_in_small_deltas_arrives_whole(fake: FakeAnthropic) -> None:
    assert len(TWO_MB) > 2_000_000
    fake.script(_write(PIECE))
    pieces: list[str] = []
    turn = await anthropic_model(fake).respond("system", HELLO, [], pieces.append)
    assert "".join(pieces) == "Writing it."
    assert turn.stop_reason == "tool_use" and turn.usage.output > 0
    [said, call] = turn.content
    assert said == {"type": "text", "text": "Writing it."}
    assert call == {
        "type": "tool_use",
        "id": "w1",
        "name": "write_file",
        "input": {"path": "big.txt", "content": TWO_MB},
    }


async def test_the_same_in_the_chat_completions_format(chat: FakeOpenAI) -> None:
    chat.script(_write(PIECE))
    pieces: list[str] = []
    turn = await chat_model(chat).respond("system", HELLO, [], pieces.append)
    assert "".join(pieces) == "Writing it."
    assert turn.content[-1]["input"] == {"path": "big.txt", "content": TWO_MB}


def test_an_error_event_in_the_stream_is_a_broken_answer_and_data_may_span_lines() -> None:
    answer = MessageAnswer(lambda text: None)
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
    for line in ("event: content_block_start", f"data: {json.dumps(start)}", ""):
        answer.add_line(line)
    answer.add_line('data: {"type": "content_block_delta", "index": 0,')
    answer.add_line('data: "delta": {"type": "text_delta", "text": "hi"}}')
    answer.add_line("")
    assert answer.open[0].pieces == ["hi"]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    answer.add_line(f"data: {json.dumps(error)}")
    with pytest.raises(StreamError, match=r"busy \(overloaded_error\)"):
        answer.add_line("")
    with pytest.raises(StreamError, match="ended before the answer did"):
        answer.turn()


def test_a_chat_stream_that_says_it_failed_is_a_broken_answer_and_done_ends_it() -> None:
    answer = ChatAnswer(lambda text: None)
    chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
    for line in (f"data: {json.dumps(chunk)}", "", "data: [DONE]", ""):
        answer.add_line(line)
    assert answer.turn().content == [{"type": "text", "text": "hi"}]
    failing = ChatAnswer(lambda text: None)
    with pytest.raises(StreamError, match=r"overloaded \(server_error\)"):
        for line in ('data: {"error": {"message": "overloaded", "type": "server_error"}}', ""):
            failing.add_line(line)
