"""A saved conversation told again as session updates, for `session/load`: the user's and
the model's words, and each tool call with its outcome. agentls's own notes in it (a task
cancelled, what undo did) are not the user's words and are left out."""

from __future__ import annotations

from typing import Any

import acp

from ..interfaces import SAID
from ..tools import TOOLS
from .progress import KINDS
from .updates import Updates


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def replay(messages: list[dict[str, Any]], updates: Updates) -> None:
    for message in messages:
        content = message.get("content")
        blocks: list[dict[str, Any]] = (
            content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
        )
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and SAID in block:  # agentls's note: only the user's words
                if block[SAID]:
                    updates.send(acp.update_user_message_text(block[SAID]))
            elif kind == "text" and block.get("text"):
                say = (
                    acp.update_agent_message_text
                    if message.get("role") == "assistant"
                    else acp.update_user_message_text
                )
                updates.send(say(block["text"]))
            elif kind == "tool_use":
                tool = TOOLS.get(block.get("name", ""))
                summary = tool.summary(block.get("input")) if tool else ""
                updates.send(
                    acp.start_tool_call(
                        block["id"],
                        f"{block.get('name', '')} {summary}".strip(),
                        kind=KINDS.get(block.get("name", ""), "other"),
                        status="in_progress",
                        raw_input=block.get("input"),
                    )
                )
            elif kind == "tool_result":
                result = _text(block.get("content"))
                updates.send(
                    acp.update_tool_call(
                        block["tool_use_id"],
                        status="failed" if block.get("is_error") else "completed",
                        content=[acp.tool_content(acp.text_block(result))] if result else None,
                    )
                )
