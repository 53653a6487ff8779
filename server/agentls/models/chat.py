"""The model through OpenAI Chat Completions, with the official openai SDK: OpenAI itself and
every server that speaks its format (LM Studio, Groq, Azure, gateways, Ollama, vLLM, ...).

The conversation is kept in the Messages API's shape (`interfaces.Block`), the loop's one
shape; this adapter translates it for each request, the same way every time, so the prompt's
prefix stays byte-stable across steps and automatic prefix caches hit. A Responses-API
adapter would be a third translation beside this one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..interfaces import Block, Messages, OnText, Schemas, Turn, Usage
from .anthropic import Adapter, BrokenAnswer, Failure, logged, with_retries
from .message_stream import EventData, ServerError

if TYPE_CHECKING:
    from openai import AsyncOpenAI

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
"""Chat Completions' finish_reason as the loop knows it from the Messages API."""


def chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool["description"],
                "parameters": tool["input_schema"],
            },
        }
        for tool in tools
    ]


def _result_text(block: Block) -> str:
    content = block.get("content", "")
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    # The format has no error flag: the words carry it.
    return f"Error: {text}" if block.get("is_error") else text


def image_part(block: Block) -> dict[str, Any]:
    """An image block as Chat Completions takes it: a data URI."""
    source = block["source"]
    url = f"data:{source['media_type']};base64,{source['data']}"
    return {"type": "image_url", "image_url": {"url": url}}


_RESULT_IMAGES = "The image(s) from the tool results above, in order:"


def _user(content: list[Block]) -> list[dict[str, Any]]:
    """A user turn's tool results as `tool` messages (text only: most servers take nothing
    else there), then one user message with the user's words and every image, the results'
    included, after a line saying whose they are."""
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": b["tool_use_id"], "content": _result_text(b)}
        for b in content
        if b.get("type") == "tool_result"
    ]
    from_results = [
        image_part(part)
        for b in content
        if b.get("type") == "tool_result" and isinstance(b.get("content"), list)
        for part in b["content"]
        if part.get("type") == "image"
    ]
    own = [
        {"type": "text", "text": b["text"]} if b.get("type") == "text" else image_part(b)
        for b in content
        if b.get("type") in ("text", "image")
    ]
    if not (from_results or any(part["type"] == "image_url" for part in own)):
        if own:
            out.append({"role": "user", "content": "\n\n".join(part["text"] for part in own)})
        return out
    parts = [{"type": "text", "text": _RESULT_IMAGES}, *from_results] if from_results else []
    out.append({"role": "user", "content": parts + own})
    return out


def _assistant(content: list[Block], with_reasoning: bool) -> dict[str, Any]:
    text = "".join(b["text"] for b in content if b.get("type") == "text")
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {
                "name": b["name"],
                "arguments": json.dumps(b.get("input"), ensure_ascii=False),
            },
        }
        for b in content
        if b.get("type") == "tool_use"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        message["tool_calls"] = calls
    reasoning = "".join(b["reasoning_content"] for b in content if b.get("type") == "reasoning")
    if reasoning and with_reasoning:
        message["reasoning_content"] = reasoning
    return message


def chat_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages.

    Each tool result becomes a `tool` message right after the call's assistant message (the
    format wants every call answered before anything else); the user's words follow them.
    A model's reasoning goes back only within the current tool loop (after the user's last
    words), where providers such as DeepSeek require it; older reasoning is left out.
    """
    loop_start = max(
        (
            i
            for i, m in enumerate(messages)
            if m["role"] == "user" and any(b.get("type") == "text" for b in m["content"])
        ),
        default=0,
    )
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for index, message in enumerate(messages):
        content = message["content"]
        if message["role"] == "assistant":
            out.append(_assistant(content, index > loop_start))
            continue
        out.extend(_user(content))
    return out


@dataclass
class _Call:
    id: str | None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    """The pieces as they came, joined once at the end: adding each to a string copies the
    whole input every time (quadratic for a long write_file)."""

    def add_name(self, piece: str) -> None:
        # Most servers send the name once; some send all of it again in every chunk.
        self.name = piece if piece.startswith(self.name) and self.name else self.name + piece


class ChatAnswer:
    """A streamed answer put together from its chunks, each chunk's JSON parsed once into
    plain data: the SDK's typed chunks cost more than the reading (a 2 MB write_file in
    small deltas: 20,000 of them)."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self.finish: str | None = None
        self.usage = Usage()
        self._events = EventData()

    def add_line(self, line: str) -> None:
        """One line of the body; `data: [DONE]` ends the stream."""
        data = self._events.add_line(line)
        if data is not None and data != "[DONE]":
            self.add(json.loads(data))

    def add(self, chunk: dict[str, Any]) -> None:
        if (error := chunk.get("error")) is not None:
            raise ServerError(error if isinstance(error, dict) else {"message": error})
        if chunk.get("usage") is not None:
            self.usage = _usage(chunk["usage"])
        for choice in (chunk.get("choices") or [])[:1]:
            delta = choice.get("delta") or {}
            if content := delta.get("content"):
                self.text.append(content)
                self.on_text(content)
            reasoning = delta.get("reasoning_content")
            if isinstance(reasoning, str):
                self.reasoning.append(reasoning)
            for fragment in delta.get("tool_calls") or []:
                self._add_call(fragment)
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def _add_call(self, fragment: dict[str, Any]) -> None:
        # Some servers send integer ids, some none at all.
        new_id = None if fragment.get("id") is None else str(fragment["id"])
        index = fragment.get("index")
        index = index if index is not None else len(self.calls) - 1
        call = self._by_index.get(index)
        # A new id at a known index is a new call: Ollama gives a whole batch index 0.
        if call is None or (new_id is not None and call.id is not None and new_id != call.id):
            call = _Call(new_id)
            self.calls.append(call)
            self._by_index[index] = call
        elif call.id is None:
            call.id = new_id
        function = fragment.get("function")
        if function is not None:
            if function.get("name"):
                call.add_name(function["name"])
            if function.get("arguments"):
                call.arguments.append(function["arguments"])

    def turn(self) -> Turn:
        if self.finish is None:
            ended = ConnectionError("the stream ended before the answer did")
            raise BrokenAnswer(ended) from ended
        content: list[Block] = []
        if self.reasoning:
            content.append({"type": "reasoning", "reasoning_content": "".join(self.reasoning)})
        if self.text:
            content.append({"type": "text", "text": "".join(self.text)})
        cut = self.finish == "length"
        for number, call in enumerate(self.calls):
            if block := _call_block(number, call, cut):
                content.append(block)
        stop = STOP_REASONS.get(self.finish, self.finish)
        if self.calls and stop == "end_turn":  # Ollama finishes a call with "stop"
            stop = "tool_use"
        return Turn(content, stop, self.usage)


def _call_block(number: int, call: _Call, cut: bool) -> Block | None:
    """The call as a tool_use block; BrokenAnswer when its arguments are not a JSON object
    or it has no name. Cut at the token limit (`cut`), it is no broken answer: it comes with
    empty arguments for the loop to tell the model it was cut, or not at all when its name
    never came (a call without a name cannot go back in the history)."""
    try:
        arguments = json.loads("".join(call.arguments) or "{}")
    except ValueError as error:
        if not cut:
            raise BrokenAnswer(error) from error
        arguments = {}
    if cut and not call.name:
        return None
    if not isinstance(arguments, dict) or not call.name:
        unnamed = ValueError(f"tool call {number} is not a named object")
        raise BrokenAnswer(unnamed) from unnamed
    return {
        "type": "tool_use",
        "id": call.id or f"call_{number}",
        "name": call.name,
        "input": arguments,
    }


def _usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    # DeepSeek counts its cache hits in a field of its own.
    cached = details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens")
    cached = cached if isinstance(cached, int) else 0
    prompt = usage.get("prompt_tokens") or 0
    output = usage.get("completion_tokens") or 0
    return Usage(input=prompt - cached, output=output, cache_read=cached)


class ChatModel(Adapter):
    client: AsyncOpenAI

    async def respond(
        self,
        system: str,
        messages: Messages,
        tools: Schemas,
        on_text: OnText,
        *,
        on_notice: OnText | None = None,
        max_tokens: int | None = None,
    ) -> Turn:
        import openai

        body = {
            "model": self.name,
            "messages": chat_messages(system, messages),
            self.endpoint.profile.max_tokens_field: self.answer_limit(max_tokens),
        }
        if tools:  # OpenAI refuses an empty list
            body["tools"] = chat_tools(tools)
        return await with_retries(
            lambda: self._stream(body, on_text),
            on_notice or logged,
            Failure(openai, self.name, self.endpoint, self._env, self.timeout),
        )

    async def _stream(self, body: dict[str, Any], on_text: Callable[[str], None]) -> Turn:
        # The SDK sends the request (its retries, its errors); the body's lines are ours.
        answer = ChatAnswer(on_text)
        async with self.client.chat.completions.with_streaming_response.create(
            **body,
            stream=True,
            stream_options={"include_usage": True},
            timeout=self.timeout,
        ) as response:
            try:
                async for line in response.iter_lines():
                    answer.add_line(line)
                answer.add_line("")  # a last event without its blank line
            except Exception as error:
                raise BrokenAnswer(error) from error
        return answer.turn()
