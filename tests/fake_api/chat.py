"""A local, scriptable fake of the OpenAI Chat Completions API, beside the Messages one.

It is `FakeAnthropic` with another wire format: the same scripts (``reply``, ``text``,
``tool_use``, ``malformed_tool_use``, faults, hangs, callables), the same stream faults
(``drop_after``, ``end_after``; ``omit_message_stop`` leaves out ``data: [DONE]``), the same
inspection (``requests``, ``billed``), so an end-to-end test runs against either. Standard
library only, like the rest of the package. Point the openai SDK's ``base_url`` (or
``OPENAI_BASE_URL``) at ``FakeOpenAI.url`` (it ends in ``/v1``).

What differs is the format's:

* ``POST /v1/chat/completions``; streamed answers are ``data: {chunk}`` lines ending with
  ``data: [DONE]``. Text comes in a few words per chunk; a tool call opens with its id, type
  and name, then its ``arguments`` string arrives in pieces cut mid-string. With
  ``stream_options.include_usage`` a last chunk with no choices carries the usage.
* Server dialects, as real servers differ (``Dialect``): parallel calls each with their own
  ``index`` (OpenAI) or all at index 0, told apart by a new id (Ollama); integer ids; the
  whole name again in every chunk; the cache hits counted as ``prompt_tokens_details.
  cached_tokens`` (OpenAI) or ``prompt_cache_hit_tokens`` (DeepSeek); ``reasoning_content``
  streamed before each answer, and then required back on the assistant messages of the
  current tool loop, as DeepSeek's thinking mode does.
* Errors are ``{"error": {"message", "type", "param", "code"}}``; a fault's ``type`` is sent
  as both type and code. The request checks are the API's: a model and messages, known roles,
  every assistant ``tool_calls`` entry answered by a ``tool`` message before anything else,
  no ``tool`` message without its call, ``arguments`` a string, ``stream_options`` only when
  streaming. ``context_window=N`` refuses longer prompts with ``context_length_exceeded``.
* Automatic prefix caching: prompt prefixes of 1,024 tokens and more are cached in 128-token
  steps (the prompt serialised canonically, tools first); a request reads the longest cached
  prefix of its own, and every step of its prompt is cached after it. Cached tokens are
  billed at 0.5 times the input price, and nothing is billed for writing them.

CLI: ``python -m fake_api --format openai [--port N] [--script FILE.json]`` (from ``tests/``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .billing import Billing, InputUsage, canonical, estimate_tokens, output_tokens
from .images import chat_image_problem
from .limits import CHARS_PER_TOKEN, DEFAULT_MIN_CACHEABLE_TOKENS
from .script import Reply, TextBlock
from .server import FakeAnthropic, _Handler
from .wire import split_json, split_text

__all__ = ["CACHE_STEP_TOKENS", "Dialect", "FakeOpenAI", "PrefixBilling", "validate_chat_request"]

CACHE_STEP_TOKENS = 128
PREFIX_READ_RATE = 0.5
ROLES = ("system", "developer", "user", "assistant", "tool")


@dataclass(frozen=True)
class Dialect:
    """How a particular server streams: see the module docstring."""

    shared_index: bool = False
    integer_ids: bool = False
    repeat_names: bool = False
    deepseek_usage: bool = False
    reasoning: bool = False


@dataclass
class PrefixBilling(Billing):
    @property
    def billed_input(self) -> float:
        """Input in base input tokens: cache reads at half price, no charge for writing."""
        return self.input + PREFIX_READ_RATE * self.cache_read


def validate_chat_request(body: Mapping[str, Any], dialect: Dialect = Dialect()) -> str | None:
    """The Chat Completions API's 400s that catch real client bugs, or None if fine."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'"
    if "stream_options" in body and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    if said := chat_image_problem(body):
        return said
    waiting: list[str] = []  # calls of the last assistant message not yet answered
    loop_start = max(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"),
        default=0,
    )
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            return f"Invalid value: '{role}'. Supported values are: {', '.join(ROLES)}."
        if role == "tool":
            if message.get("tool_call_id") not in waiting:
                return (
                    f"Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceeding message with 'tool_calls'. (messages[{i}])"
                )
            waiting.remove(message["tool_call_id"])
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}"
            )
        calls = message.get("tool_calls") or [] if role == "assistant" else []
        if role == "assistant" and message.get("content") is None and not calls:
            return f"messages[{i}]: an assistant message needs content or tool_calls"
        for j, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
                return f"messages[{i}].tool_calls[{j}].function.arguments: expected a string"
            waiting.append(call.get("id"))
        if dialect.reasoning and calls and i > loop_start and "reasoning_content" not in message:
            return (
                f"messages[{i}]: Missing `reasoning_content` field in the assistant message "
                "of a tool call in thinking mode."
            )
    return None


def _prompt_text(body: Mapping[str, Any]) -> str:
    """The prompt as the cache sees it: tools, then the messages, each canonical."""
    parts = [canonical(["tools", body.get("tools") or []])]
    parts.extend(canonical(m) for m in body.get("messages") or [])
    return "\n".join(parts)


def prefix_keys(body: Mapping[str, Any], min_tokens: int) -> list[tuple[int, str]]:
    """(tokens, key) for each cacheable prefix of the prompt, shortest first."""
    prompt = _prompt_text(body).encode()
    digest = hashlib.sha256(canonical(["model", body.get("model")]).encode())
    keys: list[tuple[int, str]] = []
    done = 0
    tokens = min_tokens
    while tokens * CHARS_PER_TOKEN <= len(prompt):
        digest.update(prompt[done : tokens * CHARS_PER_TOKEN])
        done = tokens * CHARS_PER_TOKEN
        keys.append((tokens, digest.copy().hexdigest()))
        tokens += CACHE_STEP_TOKENS
    return keys


class _ChatHandler(_Handler):
    endpoint = "/v1/chat/completions"

    def _error_body(self, type: str, message: str, request_id: str) -> Any:
        code = "context_length_exceeded" if "maximum context length" in message else type
        return {"error": {"message": message, "type": type, "param": None, "code": code}}


class FakeOpenAI(FakeAnthropic):
    """A scripted Chat Completions API on 127.0.0.1; see the module docstring."""

    handler = _ChatHandler
    billing = PrefixBilling

    def __init__(
        self,
        port: int = 0,
        *,
        dialect: Dialect = Dialect(),
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
        validate: bool = True,
        context_window: int | None = None,
    ) -> None:
        super().__init__(
            port,
            min_cacheable_tokens=min_cacheable_tokens,
            validate=validate,
            context_window=context_window,
        )
        self.dialect = dialect

    @property
    def url(self) -> str:
        return f"{super().url}/v1"

    def _problem(self, body: dict[str, Any]) -> str | None:
        problem = validate_chat_request(body, self.dialect) if self.validate else None
        if problem is None and self.context_window is not None:
            tokens = estimate_tokens(len(_prompt_text(body)))
            if tokens > self.context_window:
                problem = (
                    f"This model's maximum context length is {self.context_window} tokens. "
                    f"However, your messages resulted in {tokens} tokens. Please reduce the "
                    "length of the messages."
                )
        return problem

    def _materialise(self, turn: Reply, body: dict[str, Any]) -> tuple[dict[str, Any], InputUsage]:
        total = estimate_tokens(len(_prompt_text(body)))
        keys = prefix_keys(body, self.min_cacheable_tokens)
        out = output_tokens(turn.content)
        with self._cond:
            read = max((tokens for tokens, key in keys if key in self._cache), default=0)
            self._cache.update(key for _, key in keys)
            usage = InputUsage(total - read, read, 0)
            self._billed.input += usage.input_tokens
            self._billed.cache_read += read
            self._billed.output += out
        text = "".join(b.text for b in turn.content if isinstance(b, TextBlock))
        calls = [
            {
                "id": self._call_id(block.id),
                "type": "function",
                "function": {
                    "name": block.name,
                    "arguments": block.raw_json
                    if block.raw_json is not None
                    else json.dumps(dict(block.input)),
                },
            }
            for block in turn.content
            if not isinstance(block, TextBlock)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        completion = {
            "id": self._next_id("chatcmpl_fake"),
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(turn)}],
            "usage": self._usage_json(usage, out),
            "_request_id": self._next_id("req_fake"),
        }
        return completion, usage

    def _call_id(self, given: str | None) -> Any:
        if self.dialect.integer_ids:
            return int(self._next_id("n").split("_")[1])
        return given or self._next_id("call_fake")

    def _usage_json(self, usage: InputUsage, output: int) -> dict[str, Any]:
        prompt = usage.input_tokens + usage.cache_read_input_tokens
        json_usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
        }
        if self.dialect.deepseek_usage:
            json_usage["prompt_cache_hit_tokens"] = usage.cache_read_input_tokens
            json_usage["prompt_cache_miss_tokens"] = usage.input_tokens
        else:
            json_usage["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_input_tokens}
        return json_usage

    def _stream(
        self, message: dict[str, Any], turn: Reply, usage: InputUsage, body: dict[str, Any]
    ) -> list[tuple[str, bytes]]:
        base = {k: message[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"

        def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[str, bytes]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            data = {**base, "choices": [choice]}
            return "chunk", f"data: {json.dumps(data)}\n\n".encode()

        (choice,) = message["choices"]
        events = [chunk({"role": "assistant", "content": ""})]
        if self.dialect.reasoning:
            events.append(chunk({"reasoning_content": f"Thinking ({message['id']})."}))
        if choice["message"]["content"]:
            events.extend(chunk({"content": t}) for t in split_text(choice["message"]["content"]))
        blocks = [b for b in turn.content if not isinstance(b, TextBlock)]
        calls = choice["message"].get("tool_calls") or []
        for number, (block, call) in enumerate(zip(blocks, calls, strict=True)):
            index = 0 if self.dialect.shared_index else number
            name = call["function"]["name"]
            opened = {"index": index, "id": call["id"], "type": "function"}
            events.append(chunk({"tool_calls": [{**opened, "function": {"name": name}}]}))
            for piece in split_json(call["function"]["arguments"], block.piece_chars)[1:]:
                fragment: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
                if self.dialect.repeat_names:
                    fragment["function"]["name"] = name
                events.append(chunk({"tool_calls": [fragment]}))
        events.append(chunk({}, choice["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            data = {**base, "choices": [], "usage": message["usage"]}
            events.append(("usage", f"data: {json.dumps(data)}\n\n".encode()))
        events.append(("message_stop", b"data: [DONE]\n\n"))
        return events


def _finish_reason(turn: Reply) -> str:
    stop = turn.effective_stop_reason
    return {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}.get(
        stop, "content_filter" if stop == "refusal" else stop
    )
