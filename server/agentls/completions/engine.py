"""The completion engine: a document's buffer and cursor in, suggestions out (as offsets into
that buffer), with the privacy checks, the prompt window, the model call and the
supersession in between. The LSP door turns offsets into positions."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..config import environment
from ..interfaces import ModelError
from ..permissions.rules import Rules
from .privacy import Privacy, stamp
from .route import Route, route
from .settings import CompletionSettings
from .supersession import Supersession
from .window import window
from .wire import Answer, ModelClient, ModelFailed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    key: str
    """The document (its URI): one request at a time per key."""
    text: str
    offset: int
    """The cursor, as an offset into `text`."""
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

    async def complete(self, request: Request, config: Config, folders: Iterable[Path]) -> Outcome:
        """The inline completion at the cursor; nothing when off, for a document that may not
        feed a prompt, when superseded, or when the model fails (logged)."""
        options = config.options
        if not options.enabled:
            return NOTHING
        root = self.feeds(request.path, config, folders)
        if root is None:
            return NOTHING
        found = self.route(config)
        if isinstance(found, str):
            return Outcome(problem=found)
        secrets = self.privacy.secrets(root)

        async def ask() -> Answer | None:
            cut = window(request.text, request.offset, secrets)
            if cut is None:
                return None
            return await self.model.fill(found, cut, options.max_tokens)

        try:
            answer = await self.supersession.run(request.key, options.debounce_ms / 1000, ask)
        except ModelFailed as error:
            log.warning("completion failed: %s", error)
            return NOTHING
        if answer is None or not answer.text.strip():
            return NOTHING
        cursor = request.offset
        return Outcome((Suggestion(answer.text, cursor, cursor),), answer.seconds)
