"""What every tool is made of: its schema, its handler, the context it runs in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config.settings import Settings
from ..interfaces import Approver, LanguageServers, Progress, Shell, Workspace


class ToolError(Exception):
    """A tool could not do what was asked; the message goes back to the model as an error."""


@dataclass
class EditTally:
    applied: int = 0
    rejected: int = 0
    partly: int = 0
    """Of the applied, the proposals of which the user kept only some hunks."""


@dataclass
class ToolContext:
    workspace: Workspace
    shell: Shell
    approver: Approver
    settings: Settings
    secrets: tuple[str, ...] = ()
    """Values never to show the model (keys from the environment or .env files)."""
    edits: EditTally = field(default_factory=EditTally)
    commands_allowed_for_task: bool = False
    progress: Progress | None = None
    """Where todo_write shows the plan; None when nobody watches."""
    extra_tools: frozenset[str] = frozenset()
    """The optional tools (`Tool.optional`) the front end can serve in this task: the
    model is offered these and the core tools, and no other."""
    language: LanguageServers | None = None
    """The editor's language servers, where the front end can ask them."""
    table: Mapping[str, Tool] | None = None
    """The tools this task chooses from, by name; None for the whole table, `tools.TOOLS`."""


BeforeChange = Callable[[list[str] | None], Awaitable[None]]
"""Given to each call, and awaited by a tool right before it may change files (after the
user's approval), with the only files it will change (relative to the root) or None for any:
the loop records the workspace there, so the step can be undone."""


async def no_checkpoint(touches: list[str] | None) -> None:
    """The `BeforeChange` of a call outside the loop: nothing is recorded."""


Handler = Callable[[ToolContext, dict[str, Any], BeforeChange], Awaitable[str]]


@dataclass(frozen=True, kw_only=True)
class Tool:
    name: str
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    handler: Handler
    summary_field: str
    optional: bool = False
    """Offered only in a task whose front end can serve it (`ToolContext.extra_tools`)."""

    def schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": {
                "type": "object",
                "properties": self.properties,
                "required": list(self.required),
            },
        }

    def summary(self, arguments: Any) -> str:
        """A short line for progress reports: the main input, first line only."""
        value = arguments.get(self.summary_field) if isinstance(arguments, dict) else None
        lines = str(value).strip().splitlines() if value is not None else []
        text = lines[0] if lines else ""
        return text if len(text) <= 80 else text[:77] + "..."


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
}


def validate(tool: Tool, arguments: Any) -> dict[str, Any]:
    """The arguments if they fit the schema, else a ToolError the model can act on."""
    if not isinstance(arguments, dict):
        raise ToolError(f"{tool.name} takes an object of arguments, got {type(arguments).__name__}")
    missing = [name for name in tool.required if name not in arguments]
    if missing:
        raise ToolError(f"{tool.name} is missing the argument(s): {', '.join(missing)}")
    for name, value in arguments.items():
        spec = tool.properties.get(name)
        if spec is None:
            raise ToolError(f"{tool.name} has no argument {name!r}")
        expected = _JSON_TYPES[spec["type"]]
        # bool is an int in Python, but not an integer in JSON.
        if not isinstance(value, expected) or (
            spec["type"] == "integer" and isinstance(value, bool)
        ):
            raise ToolError(f"{tool.name}: {name} must be a {spec['type']}")
        if value not in spec.get("enum", [value]):
            raise ToolError(f"{tool.name}: {name} must be one of {', '.join(spec['enum'])}")
        if spec["type"] == "integer" and value < spec.get("minimum", value):
            raise ToolError(f"{tool.name}: {name} must be at least {spec['minimum']}")
    return arguments
