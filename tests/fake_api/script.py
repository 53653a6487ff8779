"""Turns a test scripts: replies, faults, hangs, and their JSON form."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .limits import MALFORMED_JSON
from .replay import Replay


@dataclass(frozen=True)
class TextBlock:
    text: str
    # What the text quotes (web_search_result_location objects), streamed as citations_delta
    # events after its text, as the real API sends them.
    citations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class ToolUseBlock:
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    # Streamed verbatim as input_json_delta instead of json.dumps(input), so tests
    # can feed clients input JSON the SDK cannot parse.
    raw_json: str | None = None
    # Streamed in pieces of this many characters (None: in three), as a model writing a long
    # file sends it.
    piece_chars: int | None = None


@dataclass(frozen=True)
class ServerToolBlock:
    """A block of a tool the API runs itself (Anthropic's web_search): `server_tool_use`,
    its input streamed as JSON deltas, or its result (`web_search_tool_result`), whole."""

    block: Mapping[str, Any]


Block = TextBlock | ToolUseBlock | ServerToolBlock


@dataclass(frozen=True)
class Reply:
    content: tuple[Block, ...] = ()
    stop_reason: str | None = None
    delay: float = 0.0
    event_delay: float = 0.0
    drop_after: int | None = None
    end_after: int | None = None
    omit_message_stop: bool = False

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(b, ToolUseBlock) for b in self.content):
            return "tool_use"
        return "end_turn"


@dataclass(frozen=True)
class Fault:
    status: int
    type: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Hang:
    seconds: float
    then: Turn | None = None


# A callable turn is a scripted model: it sees the request body when it arrives.
Turn = Reply | Fault | Hang | Replay | Callable[[dict[str, Any]], "Turn"]
ScriptItem = Turn | str | TextBlock | ToolUseBlock


def text(value: str) -> TextBlock:
    return TextBlock(value)


def tool_use(
    name: str,
    input: Mapping[str, Any] | None = None,
    id: str | None = None,
    *,
    raw_json: str | None = None,
    piece_chars: int | None = None,
) -> ToolUseBlock:
    return ToolUseBlock(name, dict(input or {}), id, raw_json, piece_chars)


def cited(value: str, *citations: Mapping[str, Any]) -> TextBlock:
    return TextBlock(value, tuple(citations))


def web_search(
    query: str, pages: list[tuple[str, str]], id: str = "srvtoolu_fake_1"
) -> tuple[ServerToolBlock, ServerToolBlock]:
    """A search the API ran: its query, and the pages (url, title) it found."""
    found = [
        {"type": "web_search_result", "url": url, "title": title, "encrypted_content": "e"}
        for url, title in pages
    ]
    return (
        ServerToolBlock(
            {"type": "server_tool_use", "id": id, "name": "web_search", "input": {"query": query}}
        ),
        ServerToolBlock({"type": "web_search_tool_result", "tool_use_id": id, "content": found}),
    )


def malformed_tool_use(
    name: str, raw_json: str = MALFORMED_JSON, id: str | None = None
) -> ToolUseBlock:
    return ToolUseBlock(name, {}, id, raw_json)


def reply(
    *blocks: Block | str,
    stop_reason: str | None = None,
    delay: float = 0.0,
    event_delay: float = 0.0,
    drop_after: int | None = None,
    end_after: int | None = None,
    omit_message_stop: bool = False,
) -> Reply:
    content = tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks)
    return Reply(content, stop_reason, delay, event_delay, drop_after, end_after, omit_message_stop)


def fault(status: int, type: str, message: str, headers: Mapping[str, str] | None = None) -> Fault:
    return Fault(status, type, message, dict(headers or {}))


def _retry_headers(retry_after_ms: int | None) -> dict[str, str]:
    # The real API sends both; retry-after is whole seconds, rounded up.
    if retry_after_ms is None:
        return {}
    return {"retry-after-ms": str(retry_after_ms), "retry-after": str(-(-retry_after_ms // 1000))}


# Retryable shortcuts default to a 10 ms retry-after-ms so SDK retries stay fast in
# tests; pass None to exercise the SDK's own exponential backoff instead.
def rate_limited(retry_after_ms: int | None = 10, message: str = "Rate limited") -> Fault:
    return fault(429, "rate_limit_error", message, _retry_headers(retry_after_ms))


def overloaded(retry_after_ms: int | None = 10, message: str = "Overloaded") -> Fault:
    return fault(529, "overloaded_error", message, _retry_headers(retry_after_ms))


def server_error(retry_after_ms: int | None = 10, message: str = "Internal server error") -> Fault:
    return fault(500, "api_error", message, _retry_headers(retry_after_ms))


def auth_error(message: str = "invalid x-api-key") -> Fault:
    return fault(401, "authentication_error", message)


def bad_request(message: str) -> Fault:
    return fault(400, "invalid_request_error", message)


def hang(seconds: float, then: ScriptItem | None = None) -> Hang:
    return Hang(seconds, None if then is None else as_turn(then))


def as_turn(item: ScriptItem) -> Turn:
    if isinstance(item, str):
        return reply(item)
    if isinstance(item, (TextBlock, ToolUseBlock)):
        return reply(item)
    if isinstance(item, (Reply, Fault, Hang, Replay)) or callable(item):
        return item
    raise TypeError(f"not a turn: {item!r}")


_REPLY_OPTIONS = {
    "stop_reason",
    "delay",
    "event_delay",
    "drop_after",
    "end_after",
    "omit_message_stop",
}


def _block_from_json(obj: Any) -> Block:
    if isinstance(obj, dict) and set(obj) == {"text"} and isinstance(obj["text"], str):
        return TextBlock(obj["text"])
    if isinstance(obj, dict) and set(obj) == {"tool_use"} and isinstance(obj["tool_use"], dict):
        spec = obj["tool_use"]
        unknown = set(spec) - {"name", "input", "id", "raw_json", "piece_chars"}
        if unknown or not isinstance(spec.get("name"), str):
            raise ValueError(f"bad tool_use block: {obj!r}")
        return ToolUseBlock(
            spec["name"],
            dict(spec.get("input") or {}),
            spec.get("id"),
            spec.get("raw_json"),
            spec.get("piece_chars"),
        )
    raise ValueError(f"bad content block: {obj!r}")


def turn_from_json(obj: Any) -> Turn:
    """Parse one turn in the JSON form documented in the module docstring."""
    if not isinstance(obj, dict):
        raise ValueError(f"a turn must be a JSON object, got {obj!r}")
    if "fault" in obj:
        spec = obj["fault"]
        if set(obj) != {"fault"} or not isinstance(spec, dict):
            raise ValueError(f"bad fault turn: {obj!r}")
        try:
            return fault(
                int(spec["status"]),
                str(spec["type"]),
                str(spec.get("message", "")),
                {str(k): str(v) for k, v in (spec.get("headers") or {}).items()},
            )
        except KeyError as exc:
            raise ValueError(f"fault turn lacks {exc}") from None
    if "hang" in obj:
        if set(obj) - {"hang", "then"}:
            raise ValueError(f"bad hang turn: {obj!r}")
        then = obj.get("then")
        return Hang(float(obj["hang"]), None if then is None else turn_from_json(then))
    options = {k: v for k, v in obj.items() if k in _REPLY_OPTIONS}
    rest = {k: v for k, v in obj.items() if k not in _REPLY_OPTIONS}
    if set(rest) == {"content"} and isinstance(rest["content"], list):
        blocks = [_block_from_json(b) for b in rest["content"]]
    elif len(rest) == 1 and set(rest) <= {"text", "tool_use"}:
        blocks = [_block_from_json(rest)]
    else:
        raise ValueError(f"unrecognised turn: {obj!r}")
    return reply(*blocks, **options)
