"""A task's language servers: each started on the first file of its kind, asked after each
edit, named once when it cannot start or stops answering, all stopped at the task's end."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..extensions.programs import Programs
from ..interfaces import Place, Problem
from ..shell import launch
from .connection import Refused, ServerGone
from .definitions import BUILT_IN, ServerDefinition
from .locations import places_of, utf16_units
from .offer import serves_workspace
from .server import LanguageServer

WAIT_SECONDS = 3.0
"""How long an edit's result waits for a started server's diagnostics of the new text."""
NAVIGATION_SECONDS = 5.0
"""How long `definition` or `references` waits for a started server's answer."""
MAX_TEXT = 2 * 1024 * 1024
"""A larger file is not sent to the servers."""
_SEVERITIES: dict[Any, Literal["error", "warning", "information", "hint"]] = {
    1: "error",
    2: "warning",
    3: "information",
    4: "hint",
}


@dataclass(frozen=True)
class _Request:
    method: str
    capability: str
    """The `initialize` answer's capability that says the server serves `method`."""
    extra: dict[str, Any]


_NAVIGATION = {
    "definition": _Request("textDocument/definition", "definitionProvider", {}),
    "references": _Request(
        "textDocument/references", "referencesProvider", {"context": {"includeDeclaration": True}}
    ),
}


def definitions(
    configured: Iterable[ServerDefinition], root: Path, path: str | None = None
) -> tuple[ServerDefinition, ...]:
    """The configured servers not disabled, then each built-in row's first server whose
    program is on PATH outside `root`, unless a server of its name is configured."""
    configured = tuple(configured)
    names = {definition.name for definition in configured}
    chosen = [definition for definition in configured if not definition.disabled]
    for row in BUILT_IN:
        if any(definition.name in names for definition in row):
            continue
        for definition in row:
            try:
                launch.program_path(definition.command, path or os.environ.get("PATH"), root)
            except FileNotFoundError:
                continue
            chosen.append(definition)
            break
    return tuple(chosen)


class OwnLanguageServers:
    """The servers of `definitions` for the workspace `root`, and those `later` gives (the
    repository's, approved when the task starts: asked on the first file); `read` reads a
    file as the workspace has it, `notify` tells the user (once per server) one is out."""

    def __init__(
        self,
        root: Path,
        servers: tuple[ServerDefinition, ...],
        programs: Programs,
        read: Callable[[Path], Awaitable[str]],
        notify: Callable[[str], None],
        later: Callable[[], Iterable[ServerDefinition]] = tuple,
    ) -> None:
        self.root = root
        self._servers = servers
        self._later: Callable[[], Iterable[ServerDefinition]] | None = later
        self._programs = programs
        self._read = read
        self._notify = notify
        self._running: dict[str, asyncio.Task[LanguageServer]] = {}
        self._out: set[str] = set()
        self._untold: list[str] = []
        """Lines for the model about servers found out by a navigation request: said with
        the next edit's result."""

    def navigates(self) -> bool:
        """Whether `definition` and `references` are to be offered (`offer.py`). Asked as
        the tools are chosen, before the task's approvals: the repository's servers, not
        approved yet, are not read here (they would be frozen out) and bring neither tool."""
        return serves_workspace(self._servers, self.root)

    def next_task(
        self,
        read: Callable[[Path], Awaitable[str]],
        notify: Callable[[str], None],
        later: Callable[[], Iterable[ServerDefinition]],
    ) -> None:
        """The same servers for the session's next task (those started go on, warm): its
        workspace reads, its notices, and the repository's servers it approves, which
        join on its first file."""
        self._read, self._notify, self._later = read, notify, later

    @property
    def _definitions(self) -> tuple[ServerDefinition, ...]:
        if self._later is not None:
            have = {definition.name for definition in self._servers}
            fresh = tuple(d for d in self._later() if d.name not in have)
            self._servers, self._later = (*self._servers, *fresh), None
        return self._servers

    def known(self, path: Path) -> list[Problem] | None:
        """What the servers said of `path` last, without asking; None when none has."""
        said = [
            _problem(path, item, name)
            for name, server in self._started()
            for item in server.known(path) or []
        ]
        answered = any(server.known(path) is not None for _, server in self._started())
        return [p for p in said if p is not None] if answered else None

    def _serving(self, path: Path) -> list[tuple[ServerDefinition, str]]:
        """The servers not out that serve `path`, each with its languageId for it."""
        return [
            (d, language)
            for d in self._definitions
            if d.name not in self._out and (language := d.serves(path)) is not None
        ]

    async def _text(self, path: Path) -> str | None:
        """`path`'s text as the workspace has it; None when unreadable or too large to send."""
        try:
            text = await self._read(path)
        except (OSError, ValueError):
            return None
        return text if len(text) <= MAX_TEXT else None

    async def problems_now(self, path: Path) -> tuple[list[Problem], list[str]]:
        """`path`'s problems once each server serving it has its current text, and a line
        for the model of each server that is out (said once) or late."""
        untold, self._untold = self._untold, []
        serving = self._serving(path)
        text = await self._text(path) if serving else None
        if text is None:
            return [], untold
        answers = await asyncio.gather(*(self._ask(d, lang, path, text) for d, lang in serving))
        problems = [p for found, _ in answers for p in found]
        return problems, untold + [line for _, line in answers if line]

    async def places(
        self, kind: Literal["definition", "references"], path: Path, line: int, before: str
    ) -> list[Place] | None:
        """Where every server serving `path` that offers `kind` says the symbol at (`line`,
        after `before`) is defined or used, each started if need be and given the file's
        text first; None when none answered in time."""
        serving = [(d, language) for d, language in self._serving(path) if d.navigates]
        text = await self._text(path) if serving else None
        if text is None:
            return None
        position = {"line": line - 1, "character": utf16_units(before)}
        request = _NAVIGATION[kind]
        params = {"position": position, **request.extra}
        asked = (self._locate(d, lang, path, text, request, params) for d, lang in serving)
        answers = [found for found in await asyncio.gather(*asked) if found is not None]
        return [place for found in answers for place in found] if answers else None

    async def _locate(
        self,
        definition: ServerDefinition,
        language: str,
        path: Path,
        text: str,
        request: _Request,
        params: dict[str, Any],
    ) -> list[Place] | None:
        """One server's answer; None when it does not offer the request, refused it or was
        late. One that is out is named to the user now, to the model after the next edit."""
        try:
            server = await self._server(definition)
            if not server.capabilities.get(request.capability):
                return None
            asking = server.ask(request.method, path, language, text, params)
            return places_of(await asyncio.wait_for(asking, NAVIGATION_SECONDS))
        except TimeoutError:
            return None
        except Refused as error:
            if _initialized(self._running.get(definition.name)):
                return None  # it failed this request only
            self._untold.append(self._lost(definition, str(error)))
        except (ServerGone, OSError, RuntimeError) as error:  # RuntimeError: no sandbox
            self._untold.append(self._lost(definition, str(error)))
        return None

    async def _ask(
        self, definition: ServerDefinition, language: str, path: Path, text: str
    ) -> tuple[list[Problem], str]:
        name = definition.name
        try:
            server = await self._server(definition)
            published = await server.sync(path, language, text, WAIT_SECONDS)
        except TimeoutError:
            return [], f"(The language server {name} did not answer for this edit in time.)"
        except (ServerGone, OSError, RuntimeError, ValueError) as error:
            # RuntimeError: no sandbox; ValueError: a `${VAR}` it may not name, or unset.
            return [], self._lost(definition, str(error))
        found = (_problem(path, item, name) for item in published.diagnostics)
        return [problem for problem in found if problem is not None], ""

    async def _server(self, definition: ServerDefinition) -> LanguageServer:
        task = self._running.get(definition.name)
        if task is None:
            start = LanguageServer.start(definition, self.root, self._programs)
            task = self._running[definition.name] = asyncio.ensure_future(start)
        server = await asyncio.shield(task)
        if server.gone is not None:
            raise ServerGone(f"it stopped ({server.gone})")
        return server

    def _lost(self, definition: ServerDefinition, why: str) -> str:
        """Named once to the user and once to the model; the task goes on without it."""
        self._out.add(definition.name)
        said = f"the language server {definition.name} ({definition.command}) is out: {why}"
        self._notify(said)
        return f"({said[0].upper()}{said[1:]}; edits go on without its diagnostics.)"

    def _started(self) -> list[tuple[str, LanguageServer]]:
        return [(name, task.result()) for name, task in self._running.items() if _initialized(task)]

    async def close(self) -> None:
        """Stop every server (each within its `shutdownTimeout`, then killed)."""
        for task in self._running.values():
            if not task.done():
                task.cancel()
        await asyncio.gather(*(server.stop() for _, server in self._started()))
        self._running.clear()


def _initialized(task: asyncio.Task[LanguageServer] | None) -> bool:
    """Whether the start `task` is over with a server initialized."""
    return task is not None and task.done() and not task.cancelled() and task.exception() is None


def _problem(path: Path, item: Any, server: str) -> Problem | None:
    """A pushed Diagnostic as a Problem (its source, else the server's name)."""
    try:
        line = item["range"]["start"]["line"]
        message = item["message"]
    except (KeyError, TypeError):
        return None
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        return None
    if not isinstance(message, str):
        return None
    severity = _SEVERITIES.get(item.get("severity"), "error")
    source = item.get("source") if isinstance(item.get("source"), str) else server
    first = message.strip().splitlines()[0] if message.strip() else ""
    return Problem(path, line + 1, severity, first[:300], source or server)
