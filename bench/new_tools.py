"""What the web and the images cost every task: the tokens web_fetch's schema and read_file's
sentence on images add to the first request, counted as the fake counts that request."""

from __future__ import annotations

from typing import Any

from agentls.tools import TOOLS
from agentls.tools.file_tools import IMAGES_NOTE

from .api import compute_input_usage

NEW_TOOLS = ("web_fetch",)


def _tokens(tools: list[dict[str, Any]]) -> int:
    body = {"tools": tools, "messages": [{"role": "user", "content": "hi"}]}
    usage, _ = compute_input_usage(body, frozenset())
    return usage.total


def _without_images(schema: dict[str, Any]) -> dict[str, Any]:
    description = schema["description"].replace(f" {IMAGES_NOTE}", "")
    return {**schema, "description": description}


def new_tools_cost() -> int:
    """Tokens the new tools add to the tools offered by default (webSearch off)."""
    offered = [tool.schema() for tool in TOOLS.values() if not tool.optional]
    before = [_without_images(s) for s in offered if s["name"] not in NEW_TOOLS]
    return _tokens(offered) - _tokens(before)
