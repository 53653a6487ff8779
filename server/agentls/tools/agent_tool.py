"""The `agent` tool: the model hands a task to a subagent, a new conversation with its own
system prompt and tools, and gets its final report back (`agent/subagents.py` runs it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import BeforeChange, Tool, ToolContext, ToolError

NAME = "agent"

_INTRO = (
    "Hand a self-contained task to a subagent: a fresh conversation that sees nothing of "
    "this one, so put all it needs in prompt. Only its final report comes back, with its "
    "steps, tokens and cost. Use it for broad searches or independent questions that would "
    "fill this conversation; several calls in one turn run at the same time. Types:\n"
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
            "description": {"type": "string", "description": "3-8 words, shown to the user"},
            "prompt": {"type": "string", "description": "the whole task for the subagent"},
            "subagent_type": {
                "type": "string",
                "enum": [name for name, _ in types],
                "description": "default general-purpose",
            },
        },
        required=("description", "prompt"),
        handler=_delegate,
        summary_field="description",
        delegates=True,
        words=_words,
    )
