"""The completion engine: a document's buffer and cursor in, suggestions out (as offsets into
that buffer), with the privacy checks, the prompt window, the model call and the
supersession in between. The LSP door turns offsets into positions."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..config import environment
from ..interfaces import ModelError
from ..permissions.rules import Rules
from ..redaction import redact, secret_spans
from . import zeta
from .edit_history import EditHistory
from .privacy import Privacy, stamp
from .route import Route, route
from .settings import CompletionSettings
from .supersession import Supersession
from .window import window
from .wire import ModelClient, ModelFailed
from .zeta import LineEdit

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    key: str
    """The document (its URI): one request at a time per key."""
    text: str
    offset: int
    """The cursor, as an offset into `text`."""
    line: int
    """The cursor's line."""
    path: Path | None
    """The document's file; None for one that is not a file (never completed)."""


@dataclass(frozen=True)
class Config:
    """What the engine needs of the settings (the door reads them)."""

    options: CompletionSettings
    provider: str | None = None
    """The agent's: where a model without a profile prefix runs."""
    base_url: str | None = None
    model: str | None = None
    rules: Rules = field(default_factory=Rules)
    """The user's permission rules: the paths they keep from reading feed no prompt."""


@dataclass(frozen=True)
class Suggestion:
    text: str
    start: int
    end: int
    """What `text` replaces: offsets into the request's text."""


@dataclass(frozen=True)
class Outcome:
    suggestions: tuple[Suggestion, ...] = ()
    edits: tuple[LineEdit, ...] = ()
    """The next edits (Zeta's answer), by document line."""
    model_seconds: float = 0.0
    problem: str | None = None
    """Why no model could be asked (no key, no model), for the user once."""


NOTHING = Outcome()


@dataclass
class _RouteCache:
    key: tuple[object, ...] = ()
    found: Route | None = None
    problem: str | None = None


@dataclass
class Engine:
    model: ModelClient = field(default_factory=ModelClient)
    privacy: Privacy = field(default_factory=Privacy)
    supersession: Supersession = field(default_factory=Supersession)
    history: EditHistory = field(default_factory=EditHistory)
    _route: _RouteCache = field(default_factory=_RouteCache)

    def feeds(self, path: Path | None, config: Config, folders: Iterable[Path]) -> Path | None:
        """The workspace folder of a document that may feed a prompt, else None."""
        return self.privacy.may_feed(path, folders, config.rules)

    def route(self, config: Config) -> Route | str:
        """Where requests go, or why they cannot; the user's `.env` is read again only when
        it changes."""
        key = (
            config.options,
            config.provider,
            config.base_url,
            config.model,
            stamp(environment.config_dir() / ".env"),
        )
        if key != self._route.key:
            self._route = _RouteCache(key=key)
            try:
                self._route.found = route(
                    config.options,
                    config.provider,
                    config.base_url,
                    config.model,
                    environment.user_client(),
                )
            except ModelError as error:
                self._route.problem = f"completions: {error}"
        return self._route.found or self._route.problem or "completions: no model"

    def record(
        self,
        uri: str,
        path: Path | None,
        before: str,
        after: str,
        config: Config,
        folders: Iterable[Path],
    ) -> None:
        """Note a document's change for next edits, only of a document that may feed a
        prompt (any other's history is dropped, and never shown to a model)."""
        options = config.options
        if options.enabled and options.next_edit and self.feeds(path, config, folders):
            self.history.record(uri, before, after)
        else:
            self.history.forget(uri)

    def forget(self, uri: str) -> None:
        """A closed document: its running request answered, its history dropped."""
        for fill in (True, False):
            self.supersession.supersede((uri, fill))
        self.history.forget(uri)

    async def complete(
        self, request: Request, config: Config, folders: Iterable[Path], fill: bool = True
    ) -> Outcome:
        """The completion at the cursor (with `fill`) and the next edits (with `nextEdit` and
        recent edits); nothing when off, for a document that may not feed a prompt, when
        superseded, or when the model fails (logged)."""
        options = config.options
        root = self.feeds(request.path, config, folders) if options.enabled else None
        if root is None or request.path is None:
            return NOTHING
        found = self.route(config)
        if isinstance(found, str):
            return Outcome(problem=found)
        secrets = self.privacy.secrets(root)
        relative = request.path.relative_to(root).as_posix()
        editing = options.next_edit and self.history.has_edits(request.key)
        calls = [
            *([self._fill(request, found, secrets, options.max_tokens)] if fill else []),
            *([self._next_edit(request, found, secrets, relative)] if editing else []),
        ]
        if not calls:
            return NOTHING

        async def ask() -> list[Outcome | BaseException]:
            return await asyncio.gather(*(call() for call in calls), return_exceptions=True)

        # A completion and a Copilot-style next edit of one document do not supersede each
        # other: a client may ask both at once.
        slot = (request.key, fill)
        parts = await self.supersession.run(slot, options.debounce_ms / 1000, ask)
        return _joined(parts or [])

    def _fill(
        self, request: Request, found: Route, secrets: tuple[str, ...], max_tokens: int
    ) -> Callable[[], Awaitable[Outcome]]:
        async def call() -> Outcome:
            cut = window(request.text, request.offset, secrets)
            if cut is None:
                return NOTHING
            answer = await self.model.fill(found, cut, max_tokens)
            if not answer.text.strip():
                return Outcome(model_seconds=answer.seconds)
            cursor = request.offset
            return Outcome((Suggestion(answer.text, cursor, cursor),), (), answer.seconds)

        return call

    def _next_edit(
        self, request: Request, found: Route, secrets: tuple[str, ...], relative: str
    ) -> Callable[[], Awaitable[Outcome]]:
        async def call() -> Outcome:
            text, offset = request.text, request.offset
            begin = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
            edits = self.history.diff(request.key, relative)
            shaped = zeta.prompt(relative, text, request.line, offset - begin, edits)
            if secret_spans("\n".join(shaped.region_lines), secrets):
                # The model would rewrite a secret as [redacted]: no edit may come of it.
                return NOTHING
            prompt = redact(shaped.prompt, secrets)
            answer = await self.model.rewrite(
                found, prompt, NEXT_EDIT_TOKENS, zeta.REGION_END_MARKER
            )
            found_edits = tuple(zeta.line_edits(shaped, answer.text))
            return Outcome((), found_edits, answer.seconds)

        return call


NEXT_EDIT_TOKENS = 1024
"""Tokens of a next-edit answer: Zeta's editable region (about 350 tokens) rewritten, with its
markers and room to insert lines."""


def _joined(parts: list[Outcome | BaseException]) -> Outcome:
    """One outcome of the calls made together (their model time is the longest's); a failed
    call is logged and gives nothing."""
    suggestions: list[Suggestion] = []
    edits: list[LineEdit] = []
    seconds = 0.0
    for part in parts:
        if isinstance(part, ModelFailed):
            log.warning("completion failed: %s", part)
            continue
        if isinstance(part, BaseException):
            raise part
        suggestions += part.suggestions
        edits += part.edits
        seconds = max(seconds, part.model_seconds)
    return Outcome(tuple(suggestions), tuple(edits), seconds)
