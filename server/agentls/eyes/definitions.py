"""The `lspServers` setting in the shape of Claude Code's `.lsp.json`, and the built-in
servers used when their program is on PATH and no server of that name is configured."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_IGNORED = frozenset(("transport", "workspaceFolder", "restartOnCrash", "maxRestarts"))
"""Accepted as Claude Code writes them, and ignored: stdio only, one server per task."""
_KNOWN = frozenset(
    (
        "command",
        "extensionToLanguage",
        "args",
        "env",
        "initializationOptions",
        "settings",
        "startupTimeout",
        "shutdownTimeout",
        "disabled",
    )
)


@dataclass(frozen=True, kw_only=True)
class ServerDefinition:
    """One language server: how to start it, which files it serves (extension with its dot,
    to the `languageId` sent), and how long it may take to start and to stop."""

    name: str
    command: str
    extension_to_language: Mapping[str, str]
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    initialization_options: Any = None
    settings: Any = None
    startup_timeout: float = 10.0
    shutdown_timeout: float = 1.0
    disabled: bool = False
    navigates: bool = True
    """Whether it may answer `definition` and `references` (ruff's server does not): those
    tools are offered only where one that may serves the workspace."""
    project: bool = False
    """A repository's (its `.lsp.json`, approved): `${VAR}` names only what a project's
    `.mcp.json` may, and it runs in the sandbox whatever becomes of the user's."""

    def serves(self, path: Path) -> str | None:
        """The languageId of `path` for this server, None when it does not serve it."""
        return self.extension_to_language.get(path.suffix)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(value)


def _pairs(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"{what} must map names to strings")
    return dict(value)


def _milliseconds(value: Any, what: str, default: float) -> float:
    """Claude Code's timeouts are milliseconds; seconds here."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 600_000:
        raise ValueError(f"{what}: milliseconds, more than 0 and at most 600000")
    return float(value) / 1000


def _one(name: str, value: Any) -> ServerDefinition:
    where = f"lspServers.{name}"
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object")
    unknown = set(value) - _KNOWN - _IGNORED
    if unknown:
        raise ValueError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{where} needs a command")
    languages = _pairs(value.get("extensionToLanguage"), f"{where}.extensionToLanguage")
    if not languages or not all(ext.startswith(".") for ext in languages):
        raise ValueError(f'{where}.extensionToLanguage: e.g. {{".py": "python"}}')
    disabled = value.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ValueError(f"{where}.disabled must be true or false")
    return ServerDefinition(
        name=name,
        command=command,
        extension_to_language=languages,
        args=_strings(value.get("args", []), f"{where}.args"),
        env=_pairs(value.get("env", {}), f"{where}.env"),
        initialization_options=value.get("initializationOptions"),
        settings=value.get("settings"),
        startup_timeout=_milliseconds(value.get("startupTimeout"), f"{where}.startupTimeout", 10.0),
        shutdown_timeout=_milliseconds(
            value.get("shutdownTimeout"), f"{where}.shutdownTimeout", 1.0
        ),
        disabled=disabled,
    )


def parse_servers(value: Any) -> tuple[ServerDefinition, ...]:
    """The servers of `{"NAME": {...}}`; raises ValueError for a malformed one."""
    if not isinstance(value, Mapping):
        raise ValueError('expected {"NAME": {"command": "...", "extensionToLanguage": {...}}}')
    for name in value:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"server name {name!r}: letters, digits, _ and - only")
    return tuple(_one(name, definition) for name, definition in value.items())


_PYTHON = {".py": "python", ".pyi": "python"}
_TYPESCRIPT = {
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".jsx": "javascriptreact",
}
_C = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp"}


def _built_in(
    name: str, command: str, languages: Mapping[str, str], *args: str, navigates: bool = True
) -> ServerDefinition:
    return ServerDefinition(
        name=name, command=command, extension_to_language=languages, args=args, navigates=navigates
    )


BUILT_IN: tuple[tuple[ServerDefinition, ...], ...] = (
    # Each row: the first whose program is found serves (pyright, else basedpyright).
    (
        _built_in("pyright", "pyright-langserver", _PYTHON, "--stdio"),
        _built_in("basedpyright", "basedpyright-langserver", _PYTHON, "--stdio"),
    ),
    (_built_in("ruff", "ruff", _PYTHON, "server", navigates=False),),
    (_built_in("typescript", "typescript-language-server", _TYPESCRIPT, "--stdio"),),
    (_built_in("gopls", "gopls", {".go": "go"}),),
    (_built_in("rust-analyzer", "rust-analyzer", {".rs": "rust"}),),
    (_built_in("clangd", "clangd", _C),),
)
"""The servers used without configuration, when their program is on PATH outside the
workspace and no server of the same name is configured."""
