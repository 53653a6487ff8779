"""The streamed (SSE) form of a reply."""

from __future__ import annotations

import re
from typing import Any

from .billing import InputUsage, canonical
from .script import Block, ServerToolBlock, TextBlock


def split_text(value: str) -> list[str]:
    # A few words per delta: enough deltas to exercise ordering, few enough to stay fast.
    words = re.findall(r"\S+\s*|\s+", value)
    return ["".join(words[i : i + 3]) for i in range(0, len(words), 3)]


def split_json(raw: str, piece_chars: int | None = None) -> list[str]:
    # The real API opens every tool input with an empty partial_json; clients must
    # tolerate it, so the fake sends one too. Without a size: three pieces.
    size = piece_chars or max(1, -(-len(raw) // 3))
    return ["", *(raw[i : i + size] for i in range(0, len(raw), size))]


def usage_json(usage: InputUsage, output: int) -> dict[str, Any]:
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


def sse_events(
    message: dict[str, Any], blocks: tuple[Block, ...], usage: InputUsage
) -> list[tuple[str, dict[str, Any]]]:
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage_json(usage, 1),
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, (block, wire) in enumerate(zip(blocks, message["content"], strict=True)):
        if isinstance(block, TextBlock):
            opened = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in split_text(block.text)]
            deltas += [{"type": "citations_delta", "citation": dict(c)} for c in block.citations]
        elif isinstance(block, ServerToolBlock):
            opened, deltas = dict(wire), []
            if wire["type"] == "server_tool_use":
                opened["input"] = {}
                pieces = split_json(canonical(wire["input"]))
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        else:
            opened = {**wire, "input": {}}
            raw = block.raw_json if block.raw_json is not None else canonical(block.input)
            pieces = split_json(raw, block.piece_chars)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
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
