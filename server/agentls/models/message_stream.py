"""A streamed Messages API answer put together from its raw events, in time linear in its size.

The SDK's own accumulator (`messages.stream`) parses a tool's whole partial input again at
every `input_json_delta`, which makes a long `write_file` quadratic: a 2 MB file in small
deltas never finished. Here each block's pieces are kept in a list and joined once, when
the block ends; the input is parsed then, and only then.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..interfaces import Block, Turn, Usage


class _Open:
    """A content block between its start and its stop."""

    def __init__(self, start: Any) -> None:
        self.start = start
        self.pieces: list[str] = []
        self.signature: str | None = None
        self.citations: list[Any] = []

    def block(self) -> Block:
        start, joined = self.start, "".join(self.pieces)
        if start.type == "text":
            text: Block = {"type": "text", "text": start.text + joined}
            if self.citations:
                text["citations"] = [c.model_dump(exclude_none=True) for c in self.citations]
            return text
        if start.type == "tool_use":
            # A ValueError here is a broken answer, asked again by the caller.
            arguments = json.loads(joined) if joined else start.input
            return {"type": "tool_use", "id": start.id, "name": start.name, "input": arguments}
        dumped: Block = start.model_dump(exclude_none=True)
        if start.type == "thinking":
            dumped["thinking"] = start.thinking + joined
            if self.signature is not None:
                dumped["signature"] = self.signature
        return dumped


class MessageAnswer:
    """The answer so far: `add` each raw event, then `turn()` once the stream is done."""

    def __init__(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text
        self.open: dict[int, _Open] = {}
        self.done: dict[int, Block] = {}
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {}

    def add(self, event: Any) -> None:
        kind = event.type
        if kind == "content_block_delta":
            self._delta(self.open[event.index], event.delta)
        elif kind == "content_block_start":
            self.open[event.index] = _Open(event.content_block)
        elif kind == "content_block_stop":
            self.done[event.index] = self.open.pop(event.index).block()
        elif kind == "message_start":
            self._count(event.message.usage)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason
            # Counts on a message_delta are running totals: they replace, and one left out
            # keeps the message_start's.
            self._count(event.usage)

    def _delta(self, block: _Open, delta: Any) -> None:
        kind = delta.type
        if kind == "input_json_delta":
            block.pieces.append(delta.partial_json)
        elif kind == "text_delta":
            block.pieces.append(delta.text)
            self.on_text(delta.text)
        elif kind == "thinking_delta":
            block.pieces.append(delta.thinking)
        elif kind == "signature_delta":
            block.signature = delta.signature
        elif kind == "citations_delta":
            block.citations.append(delta.citation)

    def _count(self, usage: Any) -> None:
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, name, None)
            if value is not None:
                self.usage[name] = value

    def turn(self) -> Turn:
        """The whole answer; ConnectionError when the stream ended before it did (no stop
        reason yet, or a block never closed)."""
        if self.stop_reason is None or self.open:
            raise ConnectionError("the stream ended before the answer did")
        usage = self.usage
        return Turn(
            [self.done[index] for index in sorted(self.done)],
            self.stop_reason,
            Usage(
                input=usage.get("input_tokens", 0),
                output=usage.get("output_tokens", 0),
                cache_read=usage.get("cache_read_input_tokens", 0),
                cache_write=usage.get("cache_creation_input_tokens", 0),
            ),
        )
