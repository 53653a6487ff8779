"""The permissions' settings: whether commands ask (`approveCommands`, `allowedCommands`), the
rules, the mode a session starts in; and the deny and ask rules a repository's
`.agentls/settings.json` adds (`project_rules`). `agentls/settings/` assembles them with the
other parts' settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..config.settings import Part, Setting, strings
from .modes import MODES, Mode, mode_of
from .rules import Rules, parse_rules

PROJECT_FILE = ".agentls/settings.json"


def _approve(value: Any) -> Literal["ask", "always"]:
    if value == "ask" or value == "always":
        return "ask" if value == "ask" else "always"
    raise ValueError('expected "ask" or "always"')


def _prefixes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("expected a list of command prefixes")
    return tuple(v.strip() for v in value)


_COMMAND_PREFIXES = "`;`, `&`, `|`, `` ` ``, `$`, `<`, `>`, brackets, a backslash or a line break"

ROWS = (
    Setting(
        key="approveCommands",
        field="approve_commands",
        check=_approve,
        schema={
            "type": "string",
            "enum": ["ask", "always"],
            "enumDescriptions": [
                "Put each bash command to you: Allow / Allow for this task / Deny.",
                "Run commands without asking.",
            ],
        },
        default="ask",
        description="Whether the agent's bash commands need your approval.",
        user_only=True,
    ),
    strings(
        "allowedCommands",
        "allowed_commands",
        _prefixes,
        (
            'Command prefixes that never ask, e.g. `["git status", "pytest"]`. Matched word by '
            f"word; a command with {_COMMAND_PREFIXES} always asks, and so does one naming a path "
            "outside the workspace or with an option that writes or deletes (`--output`, `-o`, "
            "`--junitxml`, `-delete`, `-exec`, ...). They always run in the sandbox."
        ),
        user_only=True,
    ),
    Setting(
        key="permissions",
        field="permissions",
        check=parse_rules,
        schema={
            "type": "object",
            "properties": {
                kind: {"type": "array", "items": {"type": "string"}}
                for kind in ("allow", "ask", "deny")
            },
            "additionalProperties": False,
        },
        default={},
        description="Rules in Claude Code's syntax that decide tool calls: "
        '`{"allow": ["Bash(npm test:*)", "mcp__time__*"], "ask": ["Bash(git push:*)"], '
        '"deny": ["Read(.env)", "Edit(secrets/**)"]}`. deny wins over ask over allow; a '
        "repository's `.agentls/settings.json` may add deny and ask rules, never allow rules.",
        user_only=True,
    ),
    Setting(
        key="mode",
        field="mode",
        check=mode_of,
        schema={
            "type": "string",
            "enum": list(MODES),
            "enumDescriptions": list(MODES.values()),
        },
        default="default",
        description=(
            "The mode a session starts in: `default`, `acceptEdits` or `plan`; each door switches "
            "it while idle."
        ),
        user_only=True,
    ),
)


@dataclass(frozen=True, kw_only=True)
class PermissionSettings(Part):
    ROWS: ClassVar[tuple[Setting, ...]] = ROWS

    approve_commands: Literal["ask", "always"] = "ask"
    allowed_commands: tuple[str, ...] = ()
    permissions: Rules = field(default_factory=Rules)
    mode: Mode = "default"


def project_rules(permissions: Any) -> tuple[Rules, list[str]]:
    """The deny and ask rules of a repository's `permissions` object, and what was wrong with
    it: a repository may narrow approvals, never widen them, so its allow rules are ignored."""
    problems = []
    if isinstance(permissions, dict) and permissions.get("allow"):
        problems.append(f"{PROJECT_FILE}: allow rules are ignored (only your settings allow)")
    try:
        narrowing = (
            {k: v for k, v in permissions.items() if k != "allow"}
            if isinstance(permissions, dict)
            else permissions
        )
        return parse_rules(narrowing, ("ask", "deny")), problems
    except ValueError as error:
        return Rules(), [*problems, f"{PROJECT_FILE}: {error}"]
