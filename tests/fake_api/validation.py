"""The 400s the real API gives for malformed conversations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .billing import prompt_blocks
from .limits import MAX_CACHE_BREAKPOINTS

_TEXT_FIELDS = {"type", "text", "cache_control", "citations"}


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
    for i, m in enumerate(messages):
        for j, b in enumerate(m.get("content") if isinstance(m.get("content"), list) else []):
            extra = set(b) - _TEXT_FIELDS if isinstance(b, dict) and b.get("type") == "text" else ()
            for name in sorted(extra):
                return f"messages.{i}.content.{j}.text.{name}: Extra inputs are not permitted"
    marked = sum(1 for _, bp in prompt_blocks(body) if bp)
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
