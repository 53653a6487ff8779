"""Permission rules in Claude Code's syntax: `Bash(npm test:*)`, `Bash(git status)`,
`Edit(src/**)`, `Read(.env)`, `mcp__github__*`, or a bare tool name for all its calls.

What each rule says of one call; the order they are consulted in, and what a command that
no rule can see through gets, is `decide.py`'s.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..shell.command_rules import is_allowed

Verdict = Literal["allow", "ask", "deny"]

# Claude Code's tool names and the agentls tools each stands for.
ALIASES: dict[str, tuple[str, ...]] = {
    "Bash": ("bash",),
    "Edit": ("edit_file", "write_file"),
    "Write": ("write_file",),
    "MultiEdit": ("edit_file",),
    "Read": ("read_file",),
    "Grep": ("grep",),
    "Glob": ("list_files",),
    "LS": ("list_files",),
    "TodoWrite": ("todo_write",),
}
_PATH_TOOLS = {"edit_file", "write_file", "read_file", "grep", "list_files"}
_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_*-]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)
CHAIN = re.compile(r"&&|\|\||[;&|\n]|\$\(|`|\(|\)")


@dataclass(frozen=True)
class Rule:
    tool: str
    """A tool name (agentls's or Claude Code's), or a pattern with `*` (`mcp__github__*`)."""
    spec: str | None = None
    """What is inside the brackets: a command, a `prefix:*`, or a path glob."""

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text.strip())
        if match is None or (match["spec"] is not None and not match["spec"].strip()):
            raise ValueError(f"{text!r} is not a rule such as Bash(npm test:*) or Edit(src/**)")
        return cls(match["tool"], match["spec"].strip() if match["spec"] else None)

    def __str__(self) -> str:
        return self.tool if self.spec is None else f"{self.tool}({self.spec})"

    def names(self, tool: str) -> bool:
        return tool in ALIASES.get(self.tool, ()) or fnmatch.fnmatchcase(tool, self.tool)

    def matches(self, tool: str, arguments: Any, root: Path, verdict: Verdict) -> bool:
        """Whether the rule names this call; a command is matched as it is written here
        (`decide.py` also matches the programs it runs)."""
        if not self.names(tool):
            return False
        if self.spec is None:
            return True
        if not isinstance(arguments, Mapping):
            return False
        if tool == "bash":
            command = arguments.get("command")
            return isinstance(command, str) and self._command(command, root, verdict)
        if tool in _PATH_TOOLS:
            path = arguments.get("path", "." if tool in ("grep", "list_files") else None)
            return isinstance(path, str) and _path_matches(self.spec, path, root)
        return False

    def _command(self, command: str, root: Path, verdict: Verdict) -> bool:
        prefix, star, _ = self.spec.partition(":*") if self.spec else ("", "", "")
        if verdict == "allow":
            # The allowedCommands match: a plain call, nothing chained, no path outside.
            if star:
                return is_allowed(command, [prefix], root)
            exact = split_words(command) == split_words(self.spec or "")
            return exact and is_allowed(command, [self.spec or ""], root)
        return any(self.fits(split_words(part)) for part in CHAIN.split(command))

    def fits(self, words: list[str]) -> bool:
        """Whether a command rule holds a program's words (`rm -rf x` for `Bash(rm:*)`); its
        program is compared by basename, as `programs.py` names what runs."""
        prefix, star, _ = self.spec.partition(":*") if self.spec else ("", "", "")
        wanted = split_words(prefix if star else self.spec or "")
        if not wanted or not words:
            return False
        wanted[0] = posixpath.basename(wanted[0])
        words = [posixpath.basename(words[0]), *words[1:]]
        return words[: len(wanted)] == wanted if star else words == wanted


def split_words(text: str) -> list[str]:
    """A command's words as shlex reads them; split at spaces where quotes do not close."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def inside_path(path: str, root: Path) -> str | None:
    """`path` (as the model gave it) from the root, links resolved: `sub/x`, `.` for the
    root; None outside it. Raises OSError or ValueError for a path that cannot be resolved."""
    inside = root.resolve()
    target = (inside / path).resolve()
    return target.relative_to(inside).as_posix() if target.is_relative_to(inside) else None


def glob_holds(pattern: str, relative: str | None) -> bool:
    """Whether the glob (from the root: `src/**` holds `src/a/b.py`, `.env` only the root's,
    `**/.env` any; `*` crosses folders) holds a path from `inside_path`; a path outside the
    root is held only by `**`."""
    if relative is None:
        return pattern in ("**", "/**")
    glob = pattern.removeprefix("./").removeprefix("/")
    if fnmatch.fnmatchcase(relative, glob):
        return True
    if glob.endswith("/**") and (relative + "/").startswith(glob[:-2]):
        return True
    return glob.startswith("**/") and fnmatch.fnmatchcase(relative, glob[3:])


def _path_matches(pattern: str, path: str, root: Path) -> bool:
    try:
        relative = inside_path(path, root)
    except (OSError, ValueError):
        return True  # a path that cannot be resolved meets every rule: it asks or is denied
    return glob_holds(pattern, relative)


@dataclass(frozen=True)
class Rules:
    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    def __add__(self, other: Rules) -> Rules:
        return Rules(self.allow + other.allow, self.ask + other.ask, self.deny + other.deny)

    def as_json(self) -> dict[str, list[str]]:
        return {key: [str(r) for r in getattr(self, key)] for key in ("allow", "ask", "deny")}


def parse_rules(value: Any, kinds: Iterable[str] = ("allow", "ask", "deny")) -> Rules:
    """Rules from `{"allow": [...], "ask": [...], "deny": [...]}`; raises ValueError."""
    if not isinstance(value, Mapping) or set(value) - {"allow", "ask", "deny"}:
        raise ValueError('expected {"allow": [...], "ask": [...], "deny": [...]} of rules')
    parsed: dict[str, tuple[Rule, ...]] = {}
    for kind in kinds:
        texts = value.get(kind, [])
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"permissions.{kind} must be a list of rules")
        parsed[kind] = tuple(Rule.parse(text) for text in texts)
    return Rules(**parsed)


def command_rules(prefixes: Iterable[str]) -> Rules:
    """The `allowedCommands` setting as the allow rules it is: `Bash(PREFIX:*)`."""
    return Rules(allow=tuple(Rule("Bash", f"{prefix}:*") for prefix in prefixes))
