"""tool_search: when the MCP tools' schemas would swamp the prompt, the model is offered their
names only, through this tool, and a tool's schema reaches it once the model found it.

The schemas come back as the tool's result (in the conversation, after the cached prefix),
so the tools offered, and with them the prompt's prefix, stay byte-stable for the session;
a found tool is then called by its name and its arguments checked against its real schema."""

from __future__ import annotations

import json
import re
from typing import Any

from ..tools.base import BeforeChange, Tool, ToolContext, ToolError

MAX_FOUND = 5
_INPUT = "input_schema"
CHARS_PER_TOKEN = 4
"""A schema's size in tokens, estimated: JSON runs at about four characters a token."""


def schema_tokens(tools: list[Tool]) -> int:
    return sum(len(json.dumps(tool.schema())) for tool in tools) // CHARS_PER_TOKEN


def _score(tool: Tool, words: list[str]) -> int:
    name, text = tool.name.lower(), f"{tool.name} {tool.description}".lower()
    return sum(3 * (word in name) + (word in text) for word in words)


async def tool_search(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    query = arguments["query"].strip()
    if not query:
        raise ToolError("query is empty; give words of what the tool should do, or its name")
    tools = context.findable_tools
    if query.startswith("select:"):
        names = [n.strip() for n in query.removeprefix("select:").split(",")]
        chosen = [tools[n] for n in names if n in tools]
    else:
        words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
        scored = sorted(tools.values(), key=lambda t: (-_score(t, words), t.name))
        chosen = [t for t in scored if _score(t, words) > 0][:MAX_FOUND]
    if not chosen:
        return f"No tool matches {query!r}. The tools: {', '.join(sorted(tools))}"
    context.found.update(tool.name for tool in chosen)
    found = "\n\n".join(
        f"{tool.name}: {tool.description}\ninput schema: {json.dumps(tool.schema()[_INPUT])}"
        for tool in chosen
    )
    return (
        f"Found {len(chosen)}; call them by name with arguments that fit their schema.\n\n{found}"
    )


def search_tool(names: list[str]) -> Tool:
    """The tool_search tool over `names` (listed in its description, so the model knows what
    there is without the schemas)."""
    return Tool(
        name="tool_search",
        description=(
            "More tools are available than are listed here (from MCP servers). Find one by "
            "words of what it does, or load some by name with `select:NAME,NAME`; the result "
            "gives each found tool's input schema, and then you call it by its name. "
            f"The tools: {', '.join(names)}"
        ),
        properties={"query": {"type": "string", "description": "Words, or select:NAME,..."}},
        required=("query",),
        handler=tool_search,
        summary_field="query",
        read_only=True,
    )
