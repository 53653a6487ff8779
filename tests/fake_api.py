"""A local, scriptable fake of the Anthropic Messages API.

Every test (and later the benchmarks and the Lua/TypeScript editor tests) talks to
this instead of the network: point ``ANTHROPIC_BASE_URL`` (or the SDK's
``base_url``) at ``FakeAnthropic.url``. Standard library only, so it also runs as a
plain script for non-Python drivers.

Python use::

    with FakeAnthropic() as fake:
        fake.script(
            reply(tool_use("read_file", {"path": "a.py"})),   # stop_reason -> "tool_use"
            rate_limited(retry_after_ms=10),                   # 429, SDK retries
            lambda body: reply(text(f"saw {len(body['messages'])} messages")),
        )
        client = anthropic.Anthropic(api_key="k", base_url=fake.url)
        ...
        fake.requests        # [Recorded(body, headers, received)], headers lower-cased
        fake.billed          # Billing(input, cache_read, cache_write, output)
        fake.billed.billed_input   # input + 1.25 x cache writes + 0.1 x cache reads

Turns (consumed FIFO, one per ``POST /v1/messages``):

* ``Reply`` / ``reply(*blocks, stop_reason=None, delay=0, event_delay=0,
  drop_after=None, end_after=None, omit_message_stop=False)``. Blocks are
  ``text(str)`` and ``tool_use(name, input, id=None, raw_json=None)``;
  ``malformed_tool_use(name)`` streams unparseable input JSON. ``stop_reason``
  defaults to "tool_use" when a tool_use block is present, else "end_turn"; any
  string is passed through ("max_tokens", "refusal", ...). ``delay`` waits before
  the first byte; ``event_delay`` waits before every later SSE event. The stream
  faults only apply to ``stream: true`` requests: ``drop_after=N`` closes the socket
  after N events (no chunked terminator, so clients see a broken body),
  ``end_after=N`` ends the body cleanly after N events, ``omit_message_stop``
  ends it cleanly without ``message_stop``.
* ``Fault`` / ``fault(status, type, message, headers=None)``, plus shortcuts
  ``rate_limited``, ``overloaded``, ``server_error``, ``auth_error``,
  ``bad_request``. Body: ``{"type":"error","error":{"type":..,"message":..}}``.
* ``Hang`` / ``hang(seconds, then=None)``: waits, then plays ``then``; with no
  ``then`` (or when the fake stops) it closes the connection without answering.
* A callable ``(body: dict) -> turn``, called when the request arrives.
* Shorthands accepted by ``script``: a ``str`` is a text reply, a lone block is a
  one-block reply.

An empty queue answers 400 invalid_request_error "fake API: script exhausted";
400 is not retried, so a test that under-scripts fails at once. Requests are first
checked for the API's common 400s (missing fields, more than 4 cache breakpoints,
tool_use without a tool_result right after and vice versa); such a request is
recorded but consumes no turn. ``FakeAnthropic(validate=False)`` skips the checks;
``FakeAnthropic(context_window=N)`` also refuses prompts over N tokens with the API's
"prompt is too long: X tokens > N maximum".

JSON turn form (``POST /_fake/script`` takes a list, ``--script FILE`` too)::

    {"content": [{"text": "hi"}, {"tool_use": {"name": "n", "input": {}, "id": "x"}}],
     "stop_reason": "tool_use", "delay": 0, "event_delay": 0,
     "drop_after": null, "end_after": null, "omit_message_stop": false}
    {"text": "hi"}                       # shorthand: one-block reply (options allowed)
    {"tool_use": {"name": "n", "input": {}, "raw_json": "{bad"}}
    {"fault": {"status": 429, "type": "rate_limit_error", "message": "slow down",
               "headers": {"retry-after-ms": "10"}}}
    {"hang": 2.5, "then": {"text": "late"}}

Other control endpoints: ``GET /_fake/requests`` (recorded bodies),
``GET /_fake/billed``, ``POST /_fake/reset`` (script, requests, cache, billing, ids).

Token accounting mimics billing closely enough for benchmarks: ~4 characters per
token over the prompt serialised canonically in the API's order (tools, system,
messages). Prompt caching follows the documented rules: a breakpoint is any block
carrying ``cache_control``; the cache is keyed by a hash of the exact prefix up to
that block (``cache_control`` itself excluded, model included); a request looks for
hits at each breakpoint and up to 20 blocks before it and reads the longest one;
the prefix up to the last breakpoint, minus what was read, is billed as cache
creation; prefixes shorter than ``min_cacheable_tokens`` are never cached. Entries
never expire. See ``compute_input_usage``.

CLI: ``python tests/fake_api.py [--port N] [--script FILE.json]`` prints
``listening on http://127.0.0.1:PORT`` and serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import selectors
import signal
import socket
import socketserver
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "CACHE_LOOKBACK_BLOCKS",
    "CACHE_READ_RATE",
    "CACHE_WRITE_RATE",
    "DEFAULT_MIN_CACHEABLE_TOKENS",
    "EXHAUSTED_MESSAGE",
    "Billing",
    "FakeAnthropic",
    "Fault",
    "Hang",
    "InputUsage",
    "Recorded",
    "Reply",
    "TextBlock",
    "ToolUseBlock",
    "Turn",
    "auth_error",
    "bad_request",
    "compute_input_usage",
    "estimate_tokens",
    "fault",
    "hang",
    "malformed_tool_use",
    "output_tokens",
    "overloaded",
    "rate_limited",
    "reply",
    "server_error",
    "text",
    "tool_use",
    "turn_from_json",
    "validate_request",
]

CHARS_PER_TOKEN = 4
CACHE_READ_RATE = 0.1
CACHE_WRITE_RATE = 1.25
"""What a cached token costs, in base input tokens: reads 0.1x, (5-minute) writes 1.25x."""
DEFAULT_MIN_CACHEABLE_TOKENS = 1024
CACHE_LOOKBACK_BLOCKS = 20
MAX_CACHE_BREAKPOINTS = 4
EXHAUSTED_MESSAGE = "fake API: script exhausted"
# Default malformed tool input: truncation alone is not enough, because the SDK
# parses partial JSON leniently; a doubled comma is rejected by every parser.
MALFORMED_JSON = '{"path": "a.py",, }'


# --------------------------------------------------------------------------- turns


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    # Streamed verbatim as input_json_delta instead of json.dumps(input), so tests
    # can feed clients input JSON the SDK cannot parse.
    raw_json: str | None = None


Block = TextBlock | ToolUseBlock


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
Turn = Reply | Fault | Hang | Callable[[dict[str, Any]], "Turn"]
ScriptItem = Turn | str | TextBlock | ToolUseBlock


def text(value: str) -> TextBlock:
    return TextBlock(value)


def tool_use(
    name: str,
    input: Mapping[str, Any] | None = None,
    id: str | None = None,
    *,
    raw_json: str | None = None,
) -> ToolUseBlock:
    return ToolUseBlock(name, dict(input or {}), id, raw_json)


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
    return Hang(seconds, None if then is None else _as_turn(then))


def _as_turn(item: ScriptItem) -> Turn:
    if isinstance(item, str):
        return reply(item)
    if isinstance(item, (TextBlock, ToolUseBlock)):
        return reply(item)
    if isinstance(item, (Reply, Fault, Hang)) or callable(item):
        return item
    raise TypeError(f"not a turn: {item!r}")


# ------------------------------------------------------------------ JSON turn form

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
        unknown = set(spec) - {"name", "input", "id", "raw_json"}
        if unknown or not isinstance(spec.get("name"), str):
            raise ValueError(f"bad tool_use block: {obj!r}")
        return ToolUseBlock(
            spec["name"], dict(spec.get("input") or {}), spec.get("id"), spec.get("raw_json")
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


# ----------------------------------------------------------------- token accounting


def estimate_tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _prompt_blocks(body: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The prompt as (canonical text, carries a breakpoint) in the API's cache order."""

    def entry(kind: str, block: Any) -> tuple[str, bool]:
        if not isinstance(block, dict):
            return _canonical([kind, block]), False
        # cache_control is left out of the key so that moving a breakpoint does not
        # change the identity of the prefix it sits on, as with the real cache.
        bare = {k: v for k, v in block.items() if k != "cache_control"}
        return _canonical([kind, bare]), bool(block.get("cache_control"))

    out = [entry("tool", t) for t in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str):
        if system:
            out.append(entry("system", {"type": "text", "text": system}))
    elif isinstance(system, list):
        out.extend(entry("system", b) for b in system)
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out.extend(entry(role, b) for b in content or [])
    return out


@dataclass(frozen=True)
class InputUsage:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


def compute_input_usage(
    body: Mapping[str, Any],
    cached: Collection[str],
    *,
    min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
    lookback: int = CACHE_LOOKBACK_BLOCKS,
) -> tuple[InputUsage, frozenset[str]]:
    """Bill one request's prompt against the prefix-hash set ``cached``.

    Pure: returns the usage and the cache keys this request writes; the caller
    decides whether to add them.
    """
    blocks = _prompt_blocks(body)
    # Chained hashes make each key identify its whole prefix in O(n) total work.
    digest = hashlib.sha256(_canonical(["model", body.get("model")]).encode()).hexdigest()
    keys: list[str] = []
    tokens_to: list[int] = []  # tokens of the prefix ending at block i, inclusive
    chars = 0
    for canonical, _ in blocks:
        digest = hashlib.sha256(f"{digest}\n{canonical}".encode()).hexdigest()
        keys.append(digest)
        chars += len(canonical)
        tokens_to.append(estimate_tokens(chars))
    total = tokens_to[-1] if tokens_to else 0

    def cacheable(i: int) -> bool:
        return tokens_to[i] >= min_cacheable_tokens

    breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
    hit = -1
    for bp in breakpoints:
        for i in range(bp, max(bp - lookback, 0) - 1, -1):
            if keys[i] in cached and cacheable(i):
                hit = max(hit, i)
                break
    read = tokens_to[hit] if hit >= 0 else 0
    write = 0
    if breakpoints and breakpoints[-1] > hit and cacheable(breakpoints[-1]):
        write = tokens_to[breakpoints[-1]] - read
    new_keys = frozenset(keys[i] for i in breakpoints if cacheable(i)) - frozenset(cached)
    return InputUsage(total - read - write, read, write), new_keys


def _over_window(body: Mapping[str, Any], window: int) -> str | None:
    tokens = estimate_tokens(sum(len(canonical) for canonical, _ in _prompt_blocks(body)))
    return f"prompt is too long: {tokens} tokens > {window} maximum" if tokens > window else None


def output_tokens(content: Iterable[Block]) -> int:
    chars = 0
    for block in content:
        if isinstance(block, TextBlock):
            chars += len(block.text)
        else:
            raw = block.raw_json if block.raw_json is not None else _canonical(block.input)
            chars += len(block.name) + len(raw)
    return max(1, estimate_tokens(chars))


@dataclass
class Billing:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    @property
    def billed_input(self) -> float:
        """Input as the API bills it, in base input tokens (cache reads and writes weighted)."""
        return (
            self.input + CACHE_WRITE_RATE * self.cache_write + CACHE_READ_RATE * self.cache_read
        )


# ---------------------------------------------------------------------- validation


def validate_request(body: Mapping[str, Any]) -> str | None:
    """The subset of the API's 400s that catch real client bugs, or None if fine."""
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    marked = sum(1 for _, bp in _prompt_blocks(body) if bp)
    if marked > MAX_CACHE_BREAKPOINTS:
        return (
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be "
            f"provided. Found {marked}."
        )
    # Orphaned tool_use / tool_result pairs are the classic agent-loop bug; the real
    # API rejects them, so the fake must too or tests would pass on broken clients.
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m.get("content"), list) else []
        if m["role"] == "assistant" and i + 1 < len(messages):
            used = [
                b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
            ]
            nxt = messages[i + 1]
            nxt_content = nxt.get("content") if isinstance(nxt.get("content"), list) else []
            answered = {
                b.get("tool_use_id")
                for b in nxt_content
                if isinstance(b, dict) and b.get("type") == "tool_result"
            }
            missing = [u for u in used if u not in answered]
            if missing:
                return (
                    f"messages.{i + 1}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(map(str, missing))}. Each "
                    "`tool_use` block must have a corresponding `tool_result` block in "
                    "the next message."
                )
        if m["role"] == "user":
            prev = messages[i - 1] if i > 0 else {}
            prev_content = prev.get("content") if isinstance(prev.get("content"), list) else []
            offered = {
                b.get("id")
                for b in prev_content
                if isinstance(b, dict) and b.get("type") == "tool_use"
            }
            for j, b in enumerate(content):
                if (
                    isinstance(b, dict)
                    and b.get("type") == "tool_result"
                    and b.get("tool_use_id") not in offered
                ):
                    return (
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {b.get('tool_use_id')}. Each `tool_result` "
                        "block must have a corresponding `tool_use` block in the previous "
                        "message."
                    )
    return None


# ------------------------------------------------------------------------ wire form


def _split_text(value: str) -> list[str]:
    # A few words per delta: enough deltas to exercise ordering, few enough to stay fast.
    words = re.findall(r"\S+\s*|\s+", value)
    return ["".join(words[i : i + 3]) for i in range(0, len(words), 3)]


def _split_json(raw: str, parts: int = 3) -> list[str]:
    # The real API opens every tool input with an empty partial_json; clients must
    # tolerate it, so the fake sends one too.
    size = max(1, -(-len(raw) // parts))
    return ["", *(raw[i : i + size] for i in range(0, len(raw), size))]


def _usage_json(usage: InputUsage, output: int) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.cache_creation_input_tokens,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": output,
        "service_tier": "standard",
    }


def _sse_events(
    message: dict[str, Any], blocks: tuple[Block, ...], usage: InputUsage
) -> list[tuple[str, dict[str, Any]]]:
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage_json(usage, 1),
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, (block, wire) in enumerate(zip(blocks, message["content"], strict=True)):
        if isinstance(block, TextBlock):
            opened = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in _split_text(block.text)]
        else:
            opened = {**wire, "input": {}}
            raw = block.raw_json if block.raw_json is not None else _canonical(block.input)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _split_json(raw)]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    final_usage = {
        k: v
        for k, v in message["usage"].items()
        if k
        in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        )
    }
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": final_usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# -------------------------------------------------------------------------- server


@dataclass(frozen=True)
class Recorded:
    body: dict[str, Any]
    headers: dict[str, str]
    received: float = field(default_factory=time.monotonic)
    """When the request arrived (time.monotonic), for timing the client between requests."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakeAnthropic) -> None:
        self.fake = fake
        super().__init__(address, fake.handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup, which can stall offline.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Quiet by design; keep surprises where a test can assert on them.
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, OSError):
            self.fake._note_error(exc)


class _Handler(BaseHTTPRequestHandler):
    """The HTTP side shared by the fakes: routes, faults, hangs, stream faults. A fake of
    another API subclasses it for its endpoint and its error body."""

    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like the real API
    server: _Server
    endpoint = "/v1/messages"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; with Nagle on, delayed ACKs
        # would add ~40 ms to every response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._track(self.connection, True)

    def finish(self) -> None:
        self.server.fake._track(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()

    # ---- plumbing

    def _read_json(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"null")

    def _send(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(
        self, status: int, type: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        request_id = self.server.fake._next_id("req_fake")
        body = self._error_body(type, message, request_id)
        self._send(status, body, {"request-id": request_id, **(headers or {})})

    def _error_body(self, type: str, message: str, request_id: str) -> Any:
        return {
            "type": "error",
            "error": {"type": type, "message": message},
            "request_id": request_id,
        }

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _route(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    # ---- verbs

    def do_GET(self) -> None:
        fake = self.server.fake
        route = self._route()
        if route == "/_fake/requests":
            self._send(200, [r.body for r in fake.requests])
        elif route == "/_fake/billed":
            self._send(200, fake.billed.__dict__)
        else:
            self._send_error(404, "not_found_error", f"fake API: no route GET {route}")

    def do_POST(self) -> None:
        fake = self.server.fake
        route = self._route()
        try:
            payload = self._read_json()
        except ValueError as exc:
            self._send_error(400, "invalid_request_error", f"invalid JSON body: {exc}")
            return
        if route == self.endpoint:
            self._messages(payload)
        elif route == "/_fake/script":
            try:
                items = payload if isinstance(payload, list) else [payload]
                turns = [turn_from_json(t) for t in items]
            except (ValueError, TypeError) as exc:
                self._send_error(400, "invalid_request_error", f"fake API: {exc}")
                return
            fake.script(*turns)
            self._send(200, {"queued": len(turns), "pending": fake.pending})
        elif route == "/_fake/reset":
            fake.reset()
            self._send(200, {"ok": True})
        else:
            self._send_error(404, "not_found_error", f"fake API: no route POST {route}")

    # ---- the Messages endpoint

    def _messages(self, body: Any) -> None:
        fake = self.server.fake
        if not isinstance(body, dict):
            self._send_error(400, "invalid_request_error", "request body must be a JSON object")
            return
        fake._record(body, {k.lower(): v for k, v in self.headers.items()})
        problem = fake._problem(body)
        if problem is not None:
            self._send_error(400, "invalid_request_error", problem)
            return
        turn = fake._next_turn()
        if turn is None:
            # x-should-retry makes "do not retry" explicit for any client, not just the SDK.
            self._send_error(
                400, "invalid_request_error", EXHAUSTED_MESSAGE, {"x-should-retry": "false"}
            )
            return
        self._play(turn, body)

    def _play(self, turn: Turn, body: dict[str, Any]) -> None:
        fake = self.server.fake
        resolved = fake._resolve(turn, body)
        if isinstance(resolved, Hang):
            if fake._stopping.wait(resolved.seconds) or resolved.then is None:
                self._drop()
            else:
                self._play(resolved.then, body)
        elif isinstance(resolved, Fault):
            self._send_error(resolved.status, resolved.type, resolved.message, resolved.headers)
        else:
            self._reply(resolved, body)

    def _reply(self, turn: Reply, body: dict[str, Any]) -> None:
        fake = self.server.fake
        message, usage = fake._materialise(turn, body)
        request_id = message.pop("_request_id")
        if turn.delay and fake._stopping.wait(turn.delay):
            self._drop()
            return
        if not body.get("stream"):
            self._send(200, message, {"request-id": request_id})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", request_id)
        self.end_headers()
        for n, (name, chunk) in enumerate(fake._stream(message, turn, usage, body)):
            if turn.drop_after is not None and n >= turn.drop_after:
                self._drop()
                return
            if turn.end_after is not None and n >= turn.end_after:
                break
            if name == "message_stop" and turn.omit_message_stop:
                break
            if n and turn.event_delay and fake._stopping.wait(turn.event_delay):
                self._drop()
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")


class FakeAnthropic:
    """A scripted Messages API on 127.0.0.1; see the module docstring."""

    handler: type[_Handler] = _Handler
    billing: type[Billing] = Billing

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
        cache_lookback: int = CACHE_LOOKBACK_BLOCKS,
        validate: bool = True,
        context_window: int | None = None,
    ) -> None:
        self.host = host
        self.context_window = context_window
        self._port = port
        self.min_cacheable_tokens = min_cacheable_tokens
        self.cache_lookback = cache_lookback
        self.validate = validate
        self._cond = threading.Condition(threading.RLock())
        self._queue: deque[Turn] = deque()
        self._requests: list[Recorded] = []
        self._cache: set[str] = set()
        self._billed = self.billing()
        self._counters: dict[str, int] = {}
        self._errors: list[BaseException] = []
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._wake: socket.socket | None = None

    # ---- lifecycle

    def start(self) -> FakeAnthropic:
        with self._cond:
            if self._server is not None or self._stopping.is_set():
                raise RuntimeError("a FakeAnthropic can be started once")
            self._server = _Server((self.host, self._port), self)
        self._port = self._server.server_address[1]
        wake_r, self._wake = socket.socketpair()
        self._thread = threading.Thread(
            target=self._serve,
            args=(self._server, wake_r),
            name=f"fake-anthropic-{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def _serve(self, server: _Server, wake: socket.socket) -> None:
        # Our own accept loop instead of serve_forever: serve_forever notices a
        # shutdown only between polls, which would put ~50 ms into every stop().
        server.timeout = 0
        with wake, selectors.DefaultSelector() as selector:
            selector.register(server, selectors.EVENT_READ)
            selector.register(wake, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is server and not self._stopping.is_set():
                        server.handle_request()

    def stop(self) -> None:
        with self._cond:
            server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wakes hangs, delays and per-event waits at once
        if self._wake is not None:
            self._wake.send(b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
        server.server_close()
        if self._wake is not None:
            self._wake.close()
        with self._cond:
            live = list(self._connections)
        # Idle keep-alive connections would otherwise pin handler threads forever.
        for conn in live:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self._port}"

    # ---- scripting and inspection

    def script(self, *turns: ScriptItem) -> None:
        converted = [_as_turn(t) for t in turns]
        with self._cond:
            self._queue.extend(converted)

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    @property
    def requests(self) -> list[Recorded]:
        with self._cond:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[Recorded]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"saw {len(self._requests)} requests, wanted {count}")
            return list(self._requests)

    @property
    def billed(self) -> Billing:
        with self._cond:
            return self.billing(**self._billed.__dict__)

    def reset_billed(self) -> Billing:
        """Zero the running totals and return what they were."""
        with self._cond:
            old, self._billed = self._billed, self.billing()
            return old

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised inside the fake (including by script callables)."""
        with self._cond:
            return list(self._errors)

    def reset(self) -> None:
        with self._cond:
            self._queue.clear()
            self._requests.clear()
            self._cache.clear()
            self._billed = self.billing()
            self._counters.clear()
            self._errors.clear()

    # ---- used by the handler threads

    def _track(self, conn: socket.socket, live: bool) -> None:
        with self._cond:
            if live and self._stopping.is_set():
                # Accepted just as stop() took its snapshot: close it here instead.
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
            elif live:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _note_error(self, exc: BaseException) -> None:
        with self._cond:
            self._errors.append(exc)

    def _next_id(self, prefix: str) -> str:
        with self._cond:
            n = self._counters[prefix] = self._counters.get(prefix, 0) + 1
        return f"{prefix}_{n}"

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._cond:
            self._requests.append(Recorded(body, headers))
            self._cond.notify_all()

    def _next_turn(self) -> Turn | None:
        with self._cond:
            return self._queue.popleft() if self._queue else None

    def _resolve(self, turn: Turn, body: dict[str, Any]) -> Reply | Fault | Hang:
        # Called outside the lock: a scripted model may inspect the fake itself.
        for _ in range(100):
            if isinstance(turn, (Reply, Fault, Hang)):
                return turn
            try:
                turn = _as_turn(turn(body))
            except Exception as exc:
                self._note_error(exc)
                return bad_request(f"fake API: script callable raised {exc!r}")
        return bad_request("fake API: script callables nested too deeply")

    def _problem(self, body: dict[str, Any]) -> str | None:
        """The 400 the real API would answer this request with, or None."""
        problem = validate_request(body) if self.validate else None
        if problem is None and self.context_window is not None:
            problem = _over_window(body, self.context_window)
        return problem

    def _stream(
        self, message: dict[str, Any], turn: Reply, usage: InputUsage, body: dict[str, Any]
    ) -> list[tuple[str, bytes]]:
        """The answer's SSE events, each named (the last one "message_stop") and framed."""
        return [
            (name, f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            for name, data in _sse_events(message, turn.content, usage)
        ]

    def _materialise(self, turn: Reply, body: dict[str, Any]) -> tuple[dict[str, Any], InputUsage]:
        content: list[dict[str, Any]] = []
        for block in turn.content:
            if isinstance(block, TextBlock):
                content.append({"type": "text", "text": block.text})
            else:
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.id or self._next_id("toolu_fake"),
                        "name": block.name,
                        "input": dict(block.input),
                    }
                )
        out = output_tokens(turn.content)
        with self._cond:
            usage, new_keys = compute_input_usage(
                body,
                self._cache,
                min_cacheable_tokens=self.min_cacheable_tokens,
                lookback=self.cache_lookback,
            )
            self._cache |= new_keys
            self._billed.input += usage.input_tokens
            self._billed.cache_read += usage.cache_read_input_tokens
            self._billed.cache_write += usage.cache_creation_input_tokens
            self._billed.output += out
        message = {
            "id": self._next_id("msg_fake"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": turn.effective_stop_reason,
            "stop_sequence": None,
            "usage": _usage_json(usage, out),
        }
        message["_request_id"] = self._next_id("req_fake")
        return message, usage


# ----------------------------------------------------------------------------- CLI


def serve(fake: FakeAnthropic, script: str | None) -> int:
    """Serve `fake` (after queueing the turns of a JSON script file) until SIGTERM/SIGINT."""
    if script:
        with open(script, encoding="utf-8") as f:
            loaded = json.load(f)
        items = loaded if isinstance(loaded, list) else [loaded]
        fake.script(*(turn_from_json(t) for t in items))

    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    fake.start()
    print(f"listening on {fake.url}", flush=True)
    # Polling rather than a bare wait() keeps the main thread responsive to signals.
    while not done.wait(0.2):
        pass
    fake.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake Anthropic Messages API for tests.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", metavar="FILE.json", help="JSON list of turns to queue")
    parser.add_argument("--min-cacheable-tokens", type=int, default=DEFAULT_MIN_CACHEABLE_TOKENS)
    args = parser.parse_args(argv)
    fake = FakeAnthropic(args.port, min_cacheable_tokens=args.min_cacheable_tokens)
    return serve(fake, args.script)


if __name__ == "__main__":
    sys.exit(main())
