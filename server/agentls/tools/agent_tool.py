"""The `agent` tool: the model hands a task to a subagent, a new conversation with its own
system prompt and tools, and gets its final report back (`agent/subagents.py` runs it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import BeforeChange, Tool, ToolContext, ToolError

NAME = "agent"

# Lean on purpose: every request carries it, and the first request with 100 MCP tools must
# stay within 2,500 tokens (bench). Models know the fields from Claude Code's Agent tool.
_INTRO = (
    "Runs prompt in a new conversation that sees none of this one, and returns its report; "
    "one turn's calls run at once.\n"
)


async def _delegate(context: ToolContext, arguments: dict[str, Any], before: BeforeChange) -> str:
    if context.subagents is None:
        raise ToolError("This agent cannot start subagents (subagents.maxDepth).")
    kind = arguments.get("subagent_type") or "general-purpose"
    text, failed = await context.subagents.run(
        arguments["description"], arguments["prompt"], kind, before
    )
    if failed:
        raise ToolError(text)
    return text


def _words(arguments: dict[str, Any], result: str) -> tuple[bool, str]:
    """The subagent's figures (the result's last line): whether it finished, and how."""
    last = result.rstrip().rsplit("\n", 1)[-1].strip("[]")
    return " done · " in f" {last}", last


def agent_tool(types: Sequence[tuple[str, str]]) -> Tool:
    """The tool, its description naming each subagent type the task offers (name, what)."""
    listed = "\n".join(f"- {name}: {what}" for name, what in types)
    return Tool(
        name=NAME,
        description=_INTRO + listed,
        properties={
            "description": {"type": "string"},
            "prompt": {"type": "string"},
            "subagent_type": {"type": "string", "enum": [name for name, _ in types]},
        },
        required=("description", "prompt"),
        handler=_delegate,
        summary_field="description",
        delegates=True,
        words=_words,
    )
