"""The tool table: every tool the model can call, and running one safely."""

from __future__ import annotations

import logging
from typing import Any

from ..disk.files import NotText
from ..disk.paths import PathError
from ..shell.bounded_output import cut_middle
from ..visible import valid_unicode
from .base import BeforeChange, Tool, ToolContext, ToolError, no_checkpoint, told, validate
from .editor_tools import DEFINITION, DIAGNOSTICS, REFERENCES, SYMBOLS
from .file_tools import EDIT_FILE, READ_FILE, WRITE_FILE
from .plan_tool import TODO_WRITE
from .search.tools import GREP, LIST_FILES
from .shell_tool import BASH

__all__ = [
    "OPTIONAL_TOOLS",
    "TOOLS",
    "Tool",
    "ToolContext",
    "ToolError",
    "offered",
    "run_tool",
    "told",
]

log = logging.getLogger(__name__)

_CORE = (BASH, READ_FILE, WRITE_FILE, EDIT_FILE, LIST_FILES, GREP, TODO_WRITE)
_OPTIONAL = (DIAGNOSTICS, DEFINITION, REFERENCES, SYMBOLS)

TOOLS: dict[str, Tool] = {tool.name: tool for tool in (*_CORE, *_OPTIONAL)}
OPTIONAL_TOOLS = frozenset(tool.name for tool in _OPTIONAL)
"""Tools offered only in a task whose front end can serve them (`ToolContext.extra_tools`)."""


def offered(context: ToolContext) -> dict[str, Tool]:
    """The tools the model is offered in this task, in the table's order: todo_write unless
    the planTool setting leaves it out."""
    return {
        name: tool
        for name, tool in TOOLS.items()
        if (name not in OPTIONAL_TOOLS or name in context.extra_tools)
        and (tool is not TODO_WRITE or context.settings.plan_tool)
    }


async def run_tool(
    context: ToolContext, name: str, arguments: Any, before_change: BeforeChange = no_checkpoint
) -> tuple[str, bool]:
    """The tool's answer and whether it is an error. Never raises but for cancellation."""
    tools = offered(context)
    tool = tools.get(name)
    try:
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(tools)}")
        text = await tool.handler(context, validate(tool, arguments), before_change)
        is_error = False
    except (ToolError, PathError, NotText) as error:
        text, is_error = str(error), True
    except Exception as error:
        log.exception("tool %s failed", name)
        text, is_error = f"{name} failed: {type(error).__name__}: {error}", True
    shown = valid_unicode(text)
    return cut_middle(shown, context.settings.output_limit, context.secrets), is_error
