"""MCP servers as the user configures them, in Claude Code's shape (`mcpServers`): parsed and
checked here, `${VAR}` and `${VAR:-default}` expanded from the environment when started."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Source = Literal["settings", "acp", "project"]
NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerSpec:
    """One server as configured: `{"command", "args", "env"}` or `{"type": "http", "url",
    "headers"}`, with `${VAR}` and `${VAR:-default}` not yet expanded."""

    name: str
    definition: Mapping[str, Any]
    source: Source = "settings"

    @property
    def http(self) -> bool:
        return self.definition.get("type") in ("http", "streamable-http") or (
            "url" in self.definition and "command" not in self.definition
        )

    def command_line(self) -> str:
        """What the user is shown when asked to approve it (before expansion)."""
        if self.http:
            return str(self.definition.get("url", ""))
        words = [str(self.definition.get("command", ""))] + [
            str(a) for a in self.definition.get("args", [])
        ]
        return shlex.join(words)

    def described(self) -> str:
        """The whole definition as the user approves it: what runs and every value it is
        given (`${VAR}` as written), so nothing is sent or set that the question hid."""
        definition = self.definition
        if self.http:
            headers = definition.get("headers", {})
            parts = [self.command_line(), *(f"header {k}: {v}" for k, v in headers.items())]
        else:
            env = definition.get("env", {})
            parts = [self.command_line(), *(f"env {k}={v}" for k, v in env.items())]
        shown = {"type", "url", "headers", "command", "args", "env"}
        parts += [f"{key}: {json.dumps(definition[key])}" for key in definition if key not in shown]
        return "; ".join(parts)

    def key(self) -> str:
        canonical = json.dumps([self.name, self.source, self.definition], sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


def parse_servers(value: Any, source: Source = "settings") -> tuple[ServerSpec, ...]:
    """Servers from `{"NAME": {...}}`; raises ValueError for a malformed one."""
    if not isinstance(value, Mapping):
        raise ValueError('expected {"NAME": {"command": "...", "args": [...]}, ...}')
    specs: list[ServerSpec] = []
    for name, definition in value.items():
        if not isinstance(name, str) or not name or NAME_CHARACTERS.search(name):
            raise ValueError(f"server name {name!r}: letters, digits, _ and - only")
        specs.append(ServerSpec(name, _checked(name, definition), source))
    return tuple(specs)


def _checked(name: str, definition: Any) -> Mapping[str, Any]:
    if not isinstance(definition, Mapping):
        raise ValueError(f"mcpServers.{name} must be an object")
    if isinstance(definition.get("url"), str):
        if definition.get("type", "http") not in ("http", "streamable-http"):
            raise ValueError(f"mcpServers.{name}: type must be http (SSE is not supported)")
        if not _pairs(definition.get("headers", {})):
            raise ValueError(f"mcpServers.{name}.headers must map names to strings")
        if "oauth" in definition:
            from .mcp_auth import check_oauth

            check_oauth(name, definition["oauth"])
        return dict(definition)
    if not isinstance(definition.get("command"), str) or not definition["command"].strip():
        raise ValueError(f"mcpServers.{name} needs a command (or a url)")
    args = definition.get("args", [])
    if not _strings(args) or not _pairs(definition.get("env", {})):
        raise ValueError(f"mcpServers.{name}: args is a list of strings, env an object")
    cwd = definition.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and os.path.isabs(cwd)):
        raise ValueError(f"mcpServers.{name}.cwd: the folder it runs in, as an absolute path")
    return dict(definition)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _pairs(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(item, str) for item in value.values())


def expand(text: str, env: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` from `env`; an unset variable without a default is an
    error, since a server started with a hole in its command line fails obscurely."""

    def value(match: re.Match[str]) -> str:
        found = env.get(match[1])
        if found:
            return found
        if match[2] is not None:
            return match[2]
        raise ValueError(f"${{{match[1]}}} is not set")

    return _VARIABLE.sub(value, text)


PROJECT_EXPANDS = ("HOME", "USER")
"""The only variables a repository's definition may name: a project never chooses to send
one of the user's keys anywhere (a header, an argument, its server's environment)."""


def variables(project: bool) -> dict[str, str]:
    """What `${VAR}` may name in a definition: the user's whole environment in theirs, in
    a repository's only PROJECT_EXPANDS."""
    if project:
        return {name: os.environ[name] for name in PROJECT_EXPANDS if name in os.environ}
    return dict(os.environ)


def from_acp(servers: list[Any]) -> tuple[ServerSpec, ...]:
    """The servers an ACP client sends in `session/new` (its user's), in the same shape; one
    that does not fit is left out."""
    specs: list[ServerSpec] = []
    for server in servers:
        pairs = getattr(server, "headers", None) or getattr(server, "env", None) or []
        values = {pair.name: pair.value for pair in pairs}
        if getattr(server, "url", None):
            definition: dict[str, Any] = {"type": "http", "url": server.url, "headers": values}
        else:
            definition = {"command": server.command, "args": list(server.args), "env": values}
        try:
            specs.extend(parse_servers({server.name: definition}, "acp"))
        except ValueError:
            continue
    return tuple(specs)
