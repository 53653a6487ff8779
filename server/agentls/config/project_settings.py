"""What a repository may say about the agent that reads it, from its own files: deny and ask
rules and hooks (`.agentls/settings.json`), MCP servers (`.mcp.json`, Claude Code's file),
language servers (`.lsp.json`, in the shape of a Claude Code plugin's), subagent definitions
(`.claude/agents/*.md`, Claude Code's files).

A repository is assumed hostile: it may narrow approvals (deny, ask), never widen them. Its
rules are returned as found, for `permissions/settings.project_rules` (which ignores allow
rules, with a note); its hooks and servers too, to run only once the user trusted that exact
definition (`extensions/trust.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..disk import files
from .definition_files import project_texts

SETTINGS_FILE = Path(".agentls") / "settings.json"
MCP_FILE = Path(".mcp.json")
LSP_FILE = Path(".lsp.json")


@dataclass(frozen=True, kw_only=True)
class ProjectSettings:
    permissions: Any = field(default_factory=dict)
    """The `permissions` object as found (`permissions/settings.project_rules` reads it)."""
    hooks: dict[str, Any] = field(default_factory=dict)
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    lsp_servers: dict[str, Any] = field(default_factory=dict)
    """`.lsp.json` as found (name to definition), to run only once approved as it is."""
    problems: tuple[str, ...] = ()
    agents: dict[str, str] = field(default_factory=dict)
    """Subagent definitions (`.claude/agents/*.md`), by path, with their text as found."""


MAX_BYTES = 1024 * 1024
"""Bytes of a repository's settings file read at most: it is parsed before any approval."""
MAX_DEPTH = 64
"""Levels of nesting kept: what json parses just under its own bound, the question that
shows a definition and its fingerprint (`json.dumps`) would not."""


def _depth(value: Any) -> int:
    """How deeply `value` nests (iteratively: the point is to stay off the stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack += [(child, level + 1) for child in item.values()]
        elif isinstance(item, list):
            stack += [(child, level + 1) for child in item]
    return deepest


def _object(root: Path, name: Path, problems: list[str]) -> dict[str, Any]:
    try:
        # Only a regular file inside the root, not through a symlink.
        text, size = files.read_head(root, root / name, MAX_BYTES)
        if size > MAX_BYTES:
            raise ValueError(f"it is {size:,} bytes, more than the {MAX_BYTES:,} read")
        loaded = json.loads(text)
        if _depth(loaded) > MAX_DEPTH:
            raise RecursionError
    except FileNotFoundError:
        return {}
    except RecursionError:  # json's own bound on nesting, or ours
        problems.append(f"{name} is ignored: it nests too deeply")
        return {}
    except (OSError, ValueError) as error:
        problems.append(f"{name} is ignored: {error}")
        return {}
    if not isinstance(loaded, dict):
        problems.append(f"{name} is ignored: it must hold an object")
        return {}
    return loaded


def load(root: Path) -> ProjectSettings:
    problems: list[str] = []
    raw = _object(root, SETTINGS_FILE, problems)
    unknown = set(raw) - {"permissions", "hooks"}
    if unknown:
        problems.append(
            f"{SETTINGS_FILE}: only permissions and hooks are read there, not "
            f"{', '.join(sorted(unknown))}"
        )
    hooks = raw.get("hooks", {})
    servers = _object(root, MCP_FILE, problems).get("mcpServers", {})
    return ProjectSettings(
        permissions=raw.get("permissions", {}),
        hooks=hooks if isinstance(hooks, dict) else {},
        mcp_servers=servers if isinstance(servers, dict) else {},
        lsp_servers=_object(root, LSP_FILE, problems),
        problems=tuple(problems),
        agents=project_texts(root),
    )
