"""Where a task's language servers come from besides the `lspServers` setting.

- The user's plugins (`.lsp.json` or `lspServers` in the manifest): the user installed them,
  so their servers run as the user's own, each named `plugin:name` as their commands are,
  which no name in a settings file or a repository's `.lsp.json` can be.
- The repository's `.lsp.json`, in the same shape: repository code, so a server of it runs
  only once the user approved its exact definition (`Trust`, kind `lsp`: the command, its
  arguments, environment and every other field, fingerprinted as written), never by the
  name of a server of the user's or a built-in one, with `${VAR}` limited to what a
  project's `.mcp.json` may name, and in the sandbox (`server.py`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ..extensions.plugins import Plugin
from ..extensions.trust import Trust
from .definitions import BUILT_IN, ServerDefinition, parse_servers

KIND = "lsp"
"""What the user's approval of a repository's language server is recorded as."""
RESERVED = frozenset(definition.name for row in BUILT_IN for definition in row)
"""A repository's server never takes a built-in's name: it would stand in for it."""


def from_plugins(plugins: Iterable[Plugin]) -> tuple[tuple[ServerDefinition, ...], list[str]]:
    """The plugins' language servers, named `plugin:name`, and what was left out, and why."""
    found: list[ServerDefinition] = []
    problems: list[str] = []
    for plugin in plugins:
        servers, left_out = plugin.lsp_servers()
        problems += left_out
        for name, definition in servers.items():
            try:
                (parsed,) = parse_servers({name: definition})
            except ValueError as error:
                problems.append(f"plugin {plugin.name}: its language server is left out: {error}")
                continue
            found.append(dataclasses.replace(parsed, name=plugin.prefix + name))
    return tuple(found), problems


def from_project(raw: Mapping[str, Any]) -> tuple[list[tuple[str, Any]], list[str]]:
    """The servers of a repository's `.lsp.json` that could run once approved, each with its
    definition as written (what is fingerprinted), and what is left out, and why."""
    servers: list[tuple[str, Any]] = []
    problems: list[str] = []
    for name, definition in raw.items():
        if name == "$schema":
            continue
        try:
            if name in RESERVED:
                raise ValueError("the name of a built-in server")
            parse_servers({name: definition})
        except ValueError as error:
            problems.append(f".lsp.json: the language server {name!r} is left out: {error}")
            continue
        servers.append((name, definition))
    return servers, problems


def approved(raw: Mapping[str, Any], trust: Trust, taken: Iterable[str]) -> list[ServerDefinition]:
    """The repository's servers the user approved as they are written now, but those named
    like one of the user's (`taken`): theirs is what runs under that name."""
    names = set(taken)
    return [
        dataclasses.replace(parse_servers({name: definition})[0], project=True)
        for name, definition in from_project(raw)[0]
        if name not in names and trust.approved(KIND, name, definition)
    ]
