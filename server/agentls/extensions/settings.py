"""The extensions' settings: MCP servers and their timeouts, tool search, hooks, skills and
plugins. `agentls/settings/` assembles them with the other parts' settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config.settings import Part, Setting, in_seconds, int_in, strings, whole
from .hooks import Hook, parse_hooks
from .mcp_config import ServerSpec, parse_servers


@dataclass(frozen=True)
class SkillOptions:
    catalog_budget: int | None = None
    """Characters of the skills' catalog in the system prompt; None: 2 % of the context
    window's size, at most 8,000 (`extensions/skill_tool.budget`)."""


def _skill_options(value: Any) -> SkillOptions:
    if not isinstance(value, Mapping) or set(value) - {"catalogBudget"}:
        raise ValueError('expected {"catalogBudget": characters or null}')
    budget = value.get("catalogBudget")
    return SkillOptions(None if budget is None else int_in(0, 100_000)(budget))


def _folders(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("expected a list of folders")
    return tuple(value)


ROWS = (
    Setting(
        key="mcpServers",
        field="mcp_servers",
        check=parse_servers,
        schema={"type": "object", "additionalProperties": {"type": "object"}},
        default={},
        description="MCP servers in Claude Code's shape: "
        '`{"time": {"command": "uvx", "args": ["mcp-server-time"]}}` or `{"type": "http", '
        '"url": "...", "headers": {...}}`; `${VAR}` and `${VAR:-default}` come from your '
        "environment. Their tools are `mcp__<server>__<tool>`. User settings only.",
        user_only=True,
    ),
    in_seconds(
        "mcpStartupTimeout",
        "mcp_startup_timeout",
        10,
        "Seconds a task waits for MCP servers still starting; a slower one is left out of it.",
    ),
    in_seconds(
        "mcpCallTimeout",
        "mcp_call_timeout",
        60,
        "Seconds an MCP tool call may take before the model is told it timed out.",
    ),
    in_seconds(
        "mcpAuthTimeout",
        "mcp_auth_timeout",
        120,
        "Seconds a sign-in to an MCP server waits for the browser to come back.",
    ),
    whole(
        "toolSearchThreshold",
        "tool_search_threshold",
        0,
        1_000_000,
        1500,
        "Tokens of MCP tool schemas past which the model is offered their names through "
        "`tool_search` instead, and loads a schema once it found the tool.",
    ),
    Setting(
        key="hooks",
        field="hooks",
        check=parse_hooks,
        schema={"type": "object"},
        default={},
        description="Commands run at `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, "
        "`SessionStart`, `PreCompact`, `SubagentStart` and `SubagentStop`, in Claude Code's "
        "format: "
        '`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": '
        '"./check.sh"}]}]}`. User settings only.',
        user_only=True,
    ),
    Setting(
        key="skills",
        field="skills",
        check=_skill_options,
        schema={
            "type": "object",
            "properties": {
                "catalogBudget": {"type": ["integer", "null"], "minimum": 0, "maximum": 100000}
            },
            "additionalProperties": False,
        },
        default={},
        description=(
            "Agent Skills: `catalogBudget`, the characters of the skills' names and descriptions "
            "in the system prompt (`null`, the default: 2 % of the context window's size in "
            "tokens, at most 8000); over it, descriptions are shortened."
        ),
    ),
    strings(
        "plugins",
        "plugins",
        _folders,
        (
            "Plugin folders (Claude Code's `.claude-plugin/` or Agent Plugins' `plugin.json`) "
            "whose skills, commands, hooks and MCP servers you use, beside those `agentls plugin "
            "add` records in your settings file. User settings only: a plugin's hooks and servers "
            "run as yours."
        ),
        user_only=True,
    ),
)


@dataclass(frozen=True, kw_only=True)
class ExtensionSettings(Part):
    ROWS: ClassVar[tuple[Setting, ...]] = ROWS

    mcp_servers: tuple[ServerSpec, ...] = ()
    mcp_startup_timeout: float = 10.0
    mcp_call_timeout: float = 60.0
    mcp_auth_timeout: float = 120.0
    tool_search_threshold: int = 1500
    hooks: tuple[Hook, ...] = ()
    skills: SkillOptions = field(default_factory=SkillOptions)
    plugins: tuple[str, ...] = ()
