"""The shell's settings: how long a command may run, the sandbox it runs in, and which of the
server's environment variables the programs agentls starts are given. `agentls/settings/`
assembles them with the other parts' settings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..config.settings import Part, Setting, boolean, in_seconds, strings


def _sandbox(value: Any) -> Literal["auto", "required", "off"]:
    for choice in ("auto", "required", "off"):
        if value == choice:
            return choice
    raise ValueError('expected "auto", "required" or "off"')


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _variable_names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and _VARIABLE_NAME.fullmatch(v) for v in value
    ):
        raise ValueError("expected a list of environment variable names")
    return tuple(value)


ROWS = (
    in_seconds(
        "bashTimeout",
        "bash_timeout",
        120,
        "Seconds before a command's whole process group is killed.",
    ),
    Setting(
        key="sandbox",
        field="sandbox",
        check=_sandbox,
        schema={
            "type": "string",
            "enum": ["auto", "required", "off"],
            "enumDescriptions": [
                "Sandboxed where bubblewrap works, else unsandboxed with a warning.",
                "Refuse to run bash without the sandbox.",
                "No sandbox.",
            ],
        },
        default="auto",
        description=(
            "Whether bash runs in a sandbox (bubblewrap on Linux): only the workspace writable "
            "(not `.git/hooks`, `.git/config`), private `/tmp`, no network, nothing it starts "
            "outlives it, no secret in its environment."
        ),
        user_only=True,
    ),
    boolean(
        "sandboxNetwork",
        "sandbox_network",
        False,
        "Let sandboxed commands reach the network.",
        user_only=True,
    ),
    boolean(
        "approvedCommandsUnsandboxed",
        "approved_commands_unsandboxed",
        False,
        "Run a command you allowed when shown it outside the sandbox. Commands that run "
        "without asking (`allowedCommands`, `approveCommands: always`, the rest of a task "
        "allowed as a whole) stay sandboxed.",
        user_only=True,
    ),
    strings(
        "passEnvironment",
        "pass_environment",
        _variable_names,
        (
            "Names of environment variables, beyond the few every program gets (`PATH`, `HOME`, "
            "`USER`, `LANG`, `LC_*`, `TERM`, `SHELL`, `TZ`, `TMPDIR`, `XDG_*`), passed to the "
            'programs agentls starts: commands, hooks, MCP servers. E.g. `["JAVA_HOME", "GOPATH"]`.'
        ),
        user_only=True,
    ),
)


@dataclass(frozen=True, kw_only=True)
class ShellSettings(Part):
    ROWS: ClassVar[tuple[Setting, ...]] = ROWS

    bash_timeout: float = 120.0
    sandbox: Literal["auto", "required", "off"] = "auto"
    sandbox_network: bool = False
    approved_commands_unsandboxed: bool = False
    pass_environment: tuple[str, ...] = ()
