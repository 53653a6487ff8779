"""What every tool is made of: its schema, its handler, the context it runs in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..interfaces import (
    Approver,
    Hooks,
    LanguageServers,
    OwnLanguageServers,
    Progress,
    Shell,
    Workspace,
)
from ..permissions.gate import Gate, Grants
from ..permissions.modes import SessionMode
from ..permissions.rules import Rules, Verdict, command_rules
from ..settings.assembly import Settings
from .result_lines import result_line


class ToolError(Exception):
    """A tool could not do what was asked; the message goes back to the model as an error."""


@dataclass
class EditTally:
    applied: int = 0
    rejected: int = 0
    partly: int = 0
    """Of the applied, the proposals of which the user kept only some hunks."""


class NoHooks:
    """The hooks of a task nobody configured any for."""

    async def submitted(self, task: str, first: bool) -> tuple[str, str | None]:
        return task, None

    async def stopping(self) -> str | None:
        return None

    async def compacting(self) -> None:
        return None

    async def before_tool(self, tool: str, arguments: Any) -> tuple[str | None, str | None]:
        return None, None

    async def after_tool(self, tool: str, arguments: Any, result: str, is_error: bool) -> str:
        return ""

    async def subagent_started(self, agent_id: str, agent_type: str) -> str:
        return ""

    async def subagent_stopping(self, agent_id: str, agent_type: str, active: bool) -> str | None:
        return None


class Delegation(Protocol):
    """Running subagents for the `agent` tool (`agent.subagents.Subagents`): the tools layer
    cannot import the loop, so the loop's side is reached through this."""

    def tool(self) -> Tool:
        """The `agent` tool as this task offers it (its description names the types)."""
        ...

    async def run(
        self, description: str, prompt: str, subagent_type: str, before_change: BeforeChange
    ) -> tuple[str, bool]:
        """The subagent's answer for the model (with its figures) and whether it failed."""
        ...


CALL_ID: ContextVar[str] = ContextVar("call_id", default="")
"""The id of the tool call being run (each call runs in its own context): a subagent names
the `agent` call it answers."""


@dataclass
class LoadedSkills:
    """The skills loaded in a task (the `skill` tool, a `/name` command)."""

    names: set[str] = field(default_factory=set)
    folders: list[Path] = field(default_factory=list)
    """Their folders: read_file reads there without asking, even outside the workspace (a
    user's skill), and only reads."""
    rules: Rules = field(default_factory=Rules)
    """The allow rules of the loaded user skills' `allowed-tools` (a project skill's never
    widen what the user's settings allow)."""


@dataclass(kw_only=True)
class ToolContext:
    workspace: Workspace
    shell: Shell
    approver: Approver
    settings: Settings
    secrets: tuple[str, ...] = ()
    """Values never to show the model (keys from the environment or .env files)."""
    edits: EditTally = field(default_factory=EditTally)
    grants: Grants = field(default_factory=Grants)
    """What the user allowed for the rest of the task, shared with its subagents."""
    progress: Progress | None = None
    """Where todo_write shows the plan; None when nobody watches."""
    extra_tools: frozenset[str] = frozenset()
    """The optional tools (`Tool.optional`) the front end can serve in this task: the
    model is offered these and the core tools, and no other."""
    language: LanguageServers | None = None
    """The editor's language servers, where the front end can ask them."""
    own_servers: OwnLanguageServers | None = None
    """The language servers agentls started itself (outside the LSP door), asked after each
    edit where the editor is not."""
    table: Mapping[str, Tool] | None = None
    """The tools this task chooses from, by name; None for the whole table, `tools.TOOLS`."""
    mode: SessionMode = field(default_factory=SessionMode)
    """The session's mode, which the door and an approved plan switch."""
    project_rules: Rules = field(default_factory=Rules)
    """The deny and ask rules of the project's `.agentls/settings.json` (never allow rules)."""
    hooks: Hooks = field(default_factory=NoHooks)
    added_tools: dict[str, Tool] = field(default_factory=dict)
    """Offered after agentls's own, fixed for the task: MCP tools, or tool_search for them."""
    findable_tools: dict[str, Tool] = field(default_factory=dict)
    """Tools the model may call once tool_search found them (`found`)."""
    found: set[str] = field(default_factory=set)
    subagents: Delegation | None = None
    """Offers the `agent` tool and runs its subagents; None: no subagents (too deep)."""
    skills: LoadedSkills = field(default_factory=LoadedSkills)
    skill_catalog: str = ""
    """The skills the model may load, for the system prompt ("" for none)."""
    hooked: Verdict | None = None
    """The PreToolUse hooks' verdict on the call being run: set on that call's own copy of
    the context (`run_tool`), so calls run together do not see each other's."""

    def rules(self) -> Rules:
        """Every permission rule of the task: the user's (with `allowedCommands` as allow
        rules, and the loaded user skills' `allowed-tools`) and the project's."""
        settings = self.settings
        own = settings.permissions + command_rules(settings.allowed_commands)
        return own + self.mode.kept + self.skills.rules + self.project_rules

    def gate(self) -> Gate:
        """The permission gate as it stands for the call being run: every question about
        what a tool may do goes there."""
        settings = self.settings
        return Gate(
            rules=self.rules(),
            root=self.workspace.root,
            approver=self.approver,
            mode=self.mode.current,
            approve_always=settings.approve_commands == "always",
            unsandboxed_when_approved=settings.approved_commands_unsandboxed,
            shell_sandboxed=self.shell.sandboxed,
            grants=self.grants,
            session=self.mode,
            hook=self.hooked,
        )


BeforeChange = Callable[[list[str] | None], Awaitable[None]]
"""Given to each call, and awaited by a tool right before it may change files (after the
user's approval), with the only files it will change (relative to the root) or None for any:
the loop records the workspace there, so the step can be undone."""


async def no_checkpoint(touches: list[str] | None) -> None:
    """The `BeforeChange` of a call outside the loop: nothing is recorded."""


Handler = Callable[[ToolContext, dict[str, Any], BeforeChange], Awaitable[str]]

Words = Callable[[dict[str, Any], str], tuple[bool, str]]
"""What a successful call did, for the user: whether it did what was asked (a command that
exited non-zero answered, but failed) and one line in their words (`read app.py (lines
20-60)`), from the call's arguments and its result."""


def _result_line(arguments: dict[str, Any], result: str) -> tuple[bool, str]:
    return True, result_line(result)


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
    read_only: bool = False
    """It changes nothing (no file, no process, nothing outside): offered in the plan mode,
    and the loop may run it at the same time as the turn's other read-only calls."""
    gated: bool = False
    """Its handler asks the permission gate itself, with what it is about to do (a command,
    an edit, a fetch's hosts, an MCP tool): `run_tool` only refuses what a deny rule names.
    Any other tool is asked by `run_tool`."""
    input_schema: dict[str, Any] | None = None
    """The whole JSON schema of its input when it is not agentls's own (an MCP tool's):
    sent as it is, and the arguments checked against it."""
    words: Words = _result_line
    delegates: bool = False
    """It runs a subagent (the `agent` tool): offered in the plan mode too, where the subagent
    gets only read-only tools; a turn's delegating calls run at the same time."""

    def schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema
            or {
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


def told(tool: Tool | None, arguments: Any, result: str, is_error: bool) -> tuple[bool, str]:
    """Whether a step did what was asked, and what happened in the user's words (an error
    in its own first sentence); the model gets `result` whole."""
    if is_error or tool is None or not isinstance(arguments, dict):
        return not is_error, result_line(result)
    return tool.words(arguments, result)


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
    if tool.input_schema is not None:
        return _against_schema(tool, arguments)
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


def _against_schema(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments checked against a foreign tool's own JSON schema (jsonschema, which
    the mcp SDK brings)."""
    import jsonschema

    schema = tool.input_schema or {}
    try:
        jsonschema.validate(arguments, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(part) for part in error.absolute_path)
        raise ToolError(f"{tool.name}: {where + ': ' if where else ''}{error.message}") from None
    except jsonschema.SchemaError:
        pass  # the server's schema is broken: let the server judge the arguments
    return arguments
