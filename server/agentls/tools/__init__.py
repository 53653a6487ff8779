"""The tool table: every tool the model can call, and running one safely."""

from __future__ import annotations

import logging
from typing import Any

from ..bounded_output import cut_middle
from ..files import NotText
from ..paths import PathError
from ..visible import valid_unicode
from .base import Tool, ToolContext, ToolError, validate
from .file_tools import EDIT_FILE, READ_FILE, WRITE_FILE
from .search_tools import GREP, LIST_FILES
from .shell_tool import BASH

__all__ = ["TOOLS", "Tool", "ToolContext", "ToolError", "run_tool"]

log = logging.getLogger(__name__)

TOOLS: dict[str, Tool] = {
    tool.name: tool for tool in (BASH, READ_FILE, WRITE_FILE, EDIT_FILE, LIST_FILES, GREP)
}


async def run_tool(context: ToolContext, name: str, arguments: Any) -> tuple[str, bool]:
    """The tool's answer and whether it is an error. Never raises but for cancellation."""
    tool = TOOLS.get(name)
    try:
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(TOOLS)}")
        text = await tool.handler(context, validate(tool, arguments))
        is_error = False
    except (ToolError, PathError, NotText) as error:
        text, is_error = str(error), True
    except Exception as error:
        log.exception("tool %s failed", name)
        text, is_error = f"{name} failed: {type(error).__name__}: {error}", True
    shown = valid_unicode(text)
    return cut_middle(shown, context.settings.output_limit, context.secrets), is_error
