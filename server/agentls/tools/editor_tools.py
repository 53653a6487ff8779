"""The eyes: the language servers' diagnostics and navigation, and the new problems an edit
brings. In the LSP door the editor's servers are asked (`ToolContext.language`), offered
where the client serves them; elsewhere agentls's own (`ToolContext.own_servers`), whose
`definition` and `references` are offered where one of them serves the workspace."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..completions.privacy import is_secret_name
from ..disk.paths import relative, resolve
from ..edits import text_lines
from ..interfaces import LanguageServers, Navigation, Place, Problem
from .base import BeforeChange, Handler, Tool, ToolContext, ToolError

MAX_NEW_PROBLEMS = 10
"""New problems named in an edit's result."""
MAX_LISTED = 50
"""Problems or places a tool lists."""
_SHOWN = ("error", "warning", "information")


def _servers(context: ToolContext, tool: str) -> LanguageServers | None:
    return context.language if tool in context.extra_tools else None


def _inside(context: ToolContext, path: Path) -> bool:
    root = context.workspace.root
    return path.is_relative_to(root) or path.is_relative_to(root.resolve())


def describe(context: ToolContext, problem: Problem) -> str:
    source = f" ({problem.source})" if problem.source else ""
    name = relative(context.workspace.root, problem.path)
    return f"{name}:{problem.line}: {problem.severity}: {problem.message}{source}"


@dataclass(frozen=True)
class Before:
    """A file's problems before an edit; None when the servers did not know the file."""

    problems: list[Problem] | None


async def problems_before(context: ToolContext, path: Path) -> Before | None:
    """What the editor (or agentls's own servers) tell of the file before an edit (None: it
    is not asked)."""
    servers = _servers(context, "diagnostics")
    if servers is not None:
        answer = await servers.problems([path])
        return Before(None if answer is None else answer.get(path))
    if context.own_servers is not None:
        return Before(context.own_servers.known(path))
    return None


async def new_problems(context: ToolContext, path: Path, before: Before | None) -> str:
    """The errors and warnings the editor, or agentls's own language servers, report for
    `path` now and did not before."""
    if before is None:
        return ""
    servers = _servers(context, "diagnostics")
    if servers is not None:
        answer = await servers.problems([path])
        if answer is None:
            return "\n(The editor did not tell its diagnostics of the edited file in time.)"
        return _block(context, path, before, answer.get(path, []), "the editor reports")
    if context.own_servers is None:
        return ""
    found, notes = await context.own_servers.problems_now(path)
    block = _block(context, path, before, found, "the language servers report")
    return block + "".join(f"\n{note}" for note in notes)


def _block(context: ToolContext, path: Path, before: Before, now: list[Problem], who: str) -> str:
    """The new errors and warnings (lines move with an edit: a problem is the same if its
    severity, message and source are), under a heading naming `who` reports them."""
    after = [p for p in now if p.severity in ("error", "warning")]
    old = Counter((p.severity, p.message, p.source) for p in before.problems or [])
    new = []
    for problem in sorted(after, key=lambda p: p.line):
        key = (problem.severity, problem.message, problem.source)
        if old[key]:
            old[key] -= 1
        else:
            new.append(problem)
    if not new:
        return ""
    lines = [describe(context, problem) for problem in new[:MAX_NEW_PROBLEMS]]
    if len(new) > MAX_NEW_PROBLEMS:
        more = "see the diagnostics tool" if who == "the editor reports" else "run a checker"
        lines.append(f"(and {len(new) - MAX_NEW_PROBLEMS} more: {more})")
    heading = (
        f"New problems {who} since this edit:"
        if before.problems is not None
        # Not known before: what was there already cannot be told apart.
        else f"Problems {who} in {relative(context.workspace.root, path)} now:"
    )
    return f"\n{heading}\n" + "\n".join(lines)


def _listed(lines: list[str], total: int, what: str, outside: int = 0) -> str:
    shown = lines[:MAX_LISTED]
    if total > MAX_LISTED:
        shown.append(f"[{total} {what}; the first {MAX_LISTED} shown]")
    if outside:
        shown.append(f"[{outside} more outside the workspace, not shown]")
    return "\n".join(shown) if shown else f"No {what}."


def _no_answer(tool: str, who: str = "the editor") -> ToolError:
    return ToolError(f"{tool}: {who} gave no answer in time; try again, or use grep")


def _navigation_source(context: ToolContext, tool: str) -> tuple[Navigation, str]:
    """Who answers `tool`: the editor where the door offers it, else agentls's own servers
    (offered only then)."""
    servers = _servers(context, tool)
    if servers is not None:
        return servers, "the editor"
    assert context.own_servers is not None  # offered only then
    return context.own_servers, "the language servers"


async def diagnostics(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    servers = _servers(context, "diagnostics")
    assert servers is not None  # offered only then
    path = arguments.get("path")
    paths = None if path is None else [resolve(context.workspace.root, path)]
    answer = await servers.problems(paths)
    if answer is None:
        raise _no_answer("diagnostics")
    every = (problem for problems in answer.values() for problem in problems)
    shown = sorted(
        (p for p in every if p.severity in _SHOWN and _inside(context, p.path)),
        key=lambda p: (relative(context.workspace.root, p.path), p.line),
    )
    return _listed([describe(context, p) for p in shown], len(shown), "problems")


async def _line_text(context: ToolContext, place: Place) -> str:
    """The place's line, but of a file the model may not read whole: a server's answer may
    point anywhere (a `.env.*`, whose values are not redacted, or a file a Read rule keeps)."""
    root, path = context.workspace.root, place.path
    if is_secret_name(path) or is_secret_name(Path(os.path.realpath(path))):
        return ""
    kept = context.gate().unreadable()
    if any(rule.matches("read_file", {"path": str(path)}, root, "deny") for rule in kept):
        return ""
    try:
        lines = text_lines(await context.workspace.read_text(place.path))
    except (OSError, ValueError):
        return ""
    return lines[place.line - 1].strip() if 0 < place.line <= len(lines) else ""


async def _places(context: ToolContext, places: list[Place], what: str) -> str:
    root = context.workspace.root
    inside = [p for p in places if _inside(context, p.path)]
    unique = sorted(set(inside), key=lambda p: (relative(root, p.path), p.line))
    lines = []
    for place in unique[:MAX_LISTED]:
        text = place.name or await _line_text(context, place)
        lines.append(f"{relative(root, place.path)}:{place.line}: {text}".rstrip())
    return _listed(lines, len(unique), what, len(places) - len(inside))


async def _navigate(
    context: ToolContext, kind: Literal["definition", "references"], arguments: dict[str, Any]
) -> str:
    servers, who = _navigation_source(context, kind)
    target = resolve(context.workspace.root, arguments["path"])
    try:
        lines = text_lines(await context.workspace.read_text(target))
    except (OSError, ValueError) as error:
        raise ToolError(f"{arguments['path']} cannot be read: {error}") from None
    number, symbol = arguments["line"], arguments["symbol"]
    if not 0 < number <= len(lines):
        raise ToolError(f"line {number} is past the end: the file has {len(lines)} lines")
    column = lines[number - 1].find(symbol) if symbol else -1
    if column < 0:
        raise ToolError(f"{symbol!r} is not on line {number}, which reads: {lines[number - 1]}")
    places = await servers.places(kind, target, number, lines[number - 1][:column])
    if places is None:
        raise _no_answer(kind, who)
    return await _places(context, places, "definitions" if kind == "definition" else kind)


async def definition(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    return await _navigate(context, "definition", arguments)


async def references(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    return await _navigate(context, "references", arguments)


async def symbols(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    servers = _servers(context, "symbols")
    assert servers is not None  # offered only then
    places = await servers.symbols(arguments["query"])
    if places is None:
        raise _no_answer("symbols")
    return await _places(context, places, "symbols")


_AT: dict[str, dict[str, Any]] = {
    "path": {"type": "string"},
    "line": {"type": "integer", "minimum": 1},
    "symbol": {"type": "string"},
}
"""Named in the navigation tools' one-line descriptions: they cost every task's first request
where they are offered (the bench's row, at most +150 tokens for the two)."""

DIAGNOSTICS = Tool(
    name="diagnostics",
    description="The errors and warnings the editor's language servers report now.",
    properties={"path": {"type": "string", "description": "A file; default every file."}},
    required=(),
    handler=diagnostics,
    read_only=True,
    summary_field="path",
    optional=True,
)


def _navigation(name: str, what: str, handler: Handler) -> Tool:
    return Tool(
        name=name,
        description=f"Where `symbol`, as written on `line` of `path`, is {what}.",
        properties=_AT,
        required=("path", "line", "symbol"),
        handler=handler,
        read_only=True,
        summary_field="symbol",
        optional=True,
    )


DEFINITION = _navigation("definition", "defined", definition)
REFERENCES = _navigation("references", "used", references)

SYMBOLS = Tool(
    name="symbols",
    description="Find classes, functions and other symbols by name in the workspace.",
    properties={"query": {"type": "string", "description": "Part of the name."}},
    required=("query",),
    handler=symbols,
    read_only=True,
    summary_field="query",
    optional=True,
)
