"""The tool table: every tool the model can call, and running one safely."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from ..disk.files import NotText
from ..disk.paths import PathError
from ..permissions.gate import Refusal, Request, Source, hooked
from ..shell.bounded_output import cut_middle
from ..visible import valid_unicode
from .base import (
    BeforeChange,
    Tool,
    ToolContext,
    ToolError,
    no_checkpoint,
    told,
    validate,
)
from .editor_tools import DEFINITION, DIAGNOSTICS, REFERENCES, SYMBOLS
from .exit_plan import EXIT_PLAN_MODE
from .file_tools import EDIT_FILE, READ_FILE, WRITE_FILE
from .plan_tool import TODO_WRITE
from .search.tools import GREP, LIST_FILES
from .shell_tool import BASH
from .web_fetch import WEB_FETCH

__all__ = [
    "OPTIONAL_TOOLS",
    "OWN_NAVIGATION",
    "TOOLS",
    "Tool",
    "ToolContext",
    "ToolError",
    "offered",
    "run_tool",
    "told",
]

log = logging.getLogger(__name__)

_CORE = (
    BASH,
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    LIST_FILES,
    GREP,
    TODO_WRITE,
    EXIT_PLAN_MODE,
    WEB_FETCH,
)
_EYES = (DIAGNOSTICS, DEFINITION, REFERENCES, SYMBOLS)  # each `optional`

TOOLS: dict[str, Tool] = {tool.name: tool for tool in (*_CORE, *_EYES)}
OPTIONAL_TOOLS = frozenset(name for name, tool in TOOLS.items() if tool.optional)
"""Tools offered only in a task whose front end can serve them (`ToolContext.extra_tools`)."""
OWN_NAVIGATION = frozenset((DEFINITION.name, REFERENCES.name))
"""Those agentls's own language servers serve outside the LSP door, where one serves the
workspace."""


def offered(context: ToolContext) -> dict[str, Tool]:
    """The tools the model is offered, in the order of its table (`TOOLS` unless the context
    brings its own), then `agent` when the task may start subagents: todo_write unless the
    planTool setting leaves it out; in the plan mode only the read-only ones, `agent` (its
    subagents get read-only tools) and exit_plan_mode. The same while the mode is (the schemas start
    the cached prefix)."""
    plan = context.mode.current == "plan"
    table = TOOLS if context.table is None else context.table
    delegation = context.subagents
    agent = {} if delegation is None else {"agent": delegation.tool()}
    return {
        name: tool
        for name, tool in {**table, **agent, **context.added_tools}.items()
        if (not tool.optional or name in context.extra_tools)
        and (tool is not TODO_WRITE or context.settings.plan_tool)
        and (tool is not EXIT_PLAN_MODE or plan)
        and (tool.read_only or tool.delegates or not plan)
    }


def _callable(context: ToolContext, tools: dict[str, Tool], name: str) -> Tool | None:
    """An offered tool, or one tool_search found (not in the plan mode unless read-only)."""
    found = context.findable_tools.get(name) if name in context.found else None
    if found is not None and (found.read_only or context.mode.current != "plan"):
        return found
    return tools.get(name)


async def run_tool(
    context: ToolContext, name: str, arguments: Any, before_change: BeforeChange = no_checkpoint
) -> tuple[str, bool]:
    """The tool's answer and whether it is an error. Never raises but for cancellation."""
    tools = offered(context)
    tool = _callable(context, tools, name)
    try:
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(tools)}")
        checked = validate(tool, arguments)
        verdict = hooked(*await context.hooks.before_tool(name, checked))
        # The call's own context carries the hooks' verdict to the gate, whoever asks it.
        call = replace(context, hooked=verdict)
        text, is_error = await _decided(call, tool, checked, before_change)
    except (ToolError, Refusal, PathError, NotText) as error:
        text, is_error = str(error), True
    except Exception as error:
        log.exception("tool %s failed", name)
        text, is_error = f"{name} failed: {type(error).__name__}: {error}", True
    shown = valid_unicode(text)
    return cut_middle(shown, context.settings.output_limit, context.secrets), is_error


async def _decided(
    context: ToolContext, tool: Tool, arguments: dict[str, Any], before_change: BeforeChange
) -> tuple[str, bool]:
    """The call run as the permission gate permits, and the PostToolUse hooks told of its
    result."""
    try:
        # A gated tool's handler asks, with what it is about to do: here, only a deny rule.
        source: Source = "ahead" if tool.gated else "call"
        shown = f"{tool.name} {tool.summary(arguments)}".strip()
        asked = Request(source=source, tool=tool.name, arguments=arguments, shown=shown)
        await context.gate().ask(asked)
        text, is_error = await tool.handler(context, arguments, before_change), False
    except (ToolError, Refusal, PathError, NotText) as error:
        text, is_error = str(error), True
    except Exception as error:
        log.exception("tool %s failed", tool.name)
        text, is_error = f"{tool.name} failed: {type(error).__name__}: {error}", True
    added = await context.hooks.after_tool(tool.name, arguments, text, is_error)
    return (f"{text}\n\n{added}" if added else text), is_error
