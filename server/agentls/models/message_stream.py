"""A streamed Messages API answer read from its server-sent events, in time linear in its size.

The SDK's own accumulator (`messages.stream`) parses a tool's whole partial input again at
every `input_json_delta`, which makes a long `write_file` quadratic (a 2 MB file in small
deltas never finished), and even its plain event stream builds a typed object per event,
which costs a long input more than reading it. Here the SDK sends the request (its
retries, its errors); the answer's lines are read as they come, each event's JSON parsed
once, each block's pieces kept in a list and joined when the block ends, and a tool's input
parsed then, and only then. `EventData`, the event layer, serves the Chat Completions
adapter too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..interfaces import Block, Turn, Usage

_RAW = "raw_input"
"""A finished tool call's input JSON, as it came, until `MessageAnswer.turn` parses it."""

_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


class StreamError(Exception):
    """The stream said it failed (an `error` event: overloaded, say) or made no sense."""


class ServerError(StreamError):
    """An `error` event: the server's own words (`message`) and kind (`kind`); only an
    overloaded or internal API error is worth asking again, a local server's error (the
    context full, output it could not parse) comes back the same every time."""

    TRANSIENT = ("overloaded_error", "api_error", "rate_limit_error")

    def __init__(self, said: dict[str, Any]) -> None:
        self.kind = str(said.get("type") or "error")
        self.message = str(said.get("message") or "")
        code = f" {said['code']}" if said.get("code") else ""
        super().__init__(f"{self.message or '(no message)'} ({self.kind}{code})")

    @property
    def transient(self) -> bool:
        return self.kind in self.TRANSIENT


class EventData:
    """Server-sent events from a body's lines: `add_line` each one; an event's `data:` lines,
    joined, come back when the blank line that ends it does, its `event:` name in `name`
    (comments and ids are not used). Both APIs repeat the name in the data, but llama.cpp's
    server names its error events only in the `event:` line."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._name = ""
        self.name = ""
        """The name of the event whose data came back last ("" for none)."""

    def add_line(self, line: str) -> str | None:
        if line.startswith("data:"):
            self._data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif line.startswith("event:"):
            self._name = line[6:].strip()
        elif not line and self._data:
            data, self._data = "\n".join(self._data), []
            self.name, self._name = self._name, ""
            return data
        elif not line:
            self._name = ""
        return None


class _Open:
    """A content block between its start and its stop."""

    def __init__(self, start: dict[str, Any]) -> None:
        self.start = start
        self.pieces: list[str] = []
        self.signature: str | None = None
        self.citations: list[Any] = []

    def block(self) -> Block:
        start, joined = self.start, "".join(self.pieces)
        kind = start.get("type")
        if kind == "text":
            text: Block = {"type": "text", "text": start.get("text", "") + joined}
            if self.citations:
                text["citations"] = self.citations
            return text
        if kind in ("tool_use", "server_tool_use"):
            # The input is parsed once the stop reason is known (`MessageAnswer.turn`): a call
            # cut at the token limit is no broken stream.
            given = start.get("input", {})
            return {
                "type": kind,
                "id": start["id"],
                "name": start["name"],
                "input": given,
                _RAW: joined,
            }
        block: Block = {k: v for k, v in start.items() if v is not None}
        if kind == "thinking":
            block["thinking"] = start.get("thinking", "") + joined
            if self.signature is not None:
                block["signature"] = self.signature
        return block


class MessageAnswer:
    """The answer so far: `add_line` each line of the body, then `turn()` at its end."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.open: dict[int, _Open] = {}
        self.done: dict[int, Block] = {}
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {}
        self._events = EventData()

    def add_line(self, line: str) -> None:
        """One line of the event stream (see `EventData`)."""
        if (data := self._events.add_line(line)) is not None:
            event = json.loads(data)
            if self._events.name == "error" and isinstance(event, dict) and "error" not in event:
                # llama.cpp's server: the error's fields bare, without the API's envelope.
                event = {"type": "error", "error": event}
            self.add(event)

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "content_block_delta":
            self._delta(self.open[event["index"]], event["delta"])
        elif kind == "content_block_start":
            self.open[event["index"]] = _Open(event["content_block"])
        elif kind == "content_block_stop":
            self.done[event["index"]] = self.open.pop(event["index"]).block()
        elif kind == "message_start":
            self._count(event["message"].get("usage") or {})
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason")
            # Counts on a message_delta are running totals: they replace, and one left out
            # keeps the message_start's.
            self._count(event.get("usage") or {})
        elif kind == "error":
            said = event.get("error")
            raise ServerError(said if isinstance(said, dict) else {"message": said})

    def _delta(self, block: _Open, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "input_json_delta":
            block.pieces.append(delta["partial_json"])
        elif kind == "text_delta":
            block.pieces.append(delta["text"])
            self.on_text(delta["text"])
        elif kind == "thinking_delta":
            block.pieces.append(delta["thinking"])
        elif kind == "signature_delta":
            block.signature = delta["signature"]
        elif kind == "citations_delta":
            block.citations.append(delta["citation"])

    def _count(self, usage: dict[str, Any]) -> None:
        self.usage.update((k, usage[k]) for k in _COUNTS if usage.get(k) is not None)

    def turn(self) -> Turn:
        """The whole answer; StreamError when the stream ended before it did (no stop
        reason yet, or a block never closed). A call's input that is not JSON is a broken
        answer (ValueError), unless the answer was cut at the token limit: the call then
        comes with an empty input, for the loop to tell the model it was cut."""
        if self.stop_reason is None or self.open:
            raise StreamError("the stream ended before the answer did")
        cut = self.stop_reason == "max_tokens"
        usage = self.usage
        return Turn(
            [_with_input(self.done[index], cut) for index in sorted(self.done)],
            self.stop_reason,
            Usage(
                input=usage.get("input_tokens", 0),
                output=usage.get("output_tokens", 0),
                cache_read=usage.get("cache_read_input_tokens", 0),
                cache_write=usage.get("cache_creation_input_tokens", 0),
            ),
        )


def _with_input(block: Block, cut: bool) -> Block:
    if _RAW not in block:
        return block
    raw = block.pop(_RAW)
    try:
        if raw:
            block["input"] = json.loads(raw)
    except ValueError:
        if not cut:
            raise
        block["input"] = {}
    return block
