"""`textDocument/inlineCompletion` (LSP 3.18): the completion engine (`completions/`) over the
server's copy of each open buffer, its answers as ranges in the negotiated encoding.

Advertised only when the `completions` setting enables it: at `initialize` from the user's
settings file and the editor's initializationOptions (read lightly: the engine, its HTTP
client and the settings parser are imported at the first request, not while the editor
waits), or later by `client/registerCapability` once a configuration change enables it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ..completions import settings as completion_settings

if TYPE_CHECKING:
    from ..completions.engine import Engine, Outcome
    from ..config.settings import Settings
    from .agent_server import AgentServer

log = logging.getLogger(__name__)

REGISTRATION = "agentls.inlineCompletion"


def _light_user_settings() -> dict[str, Any]:
    """The user's settings file as JSON, without the settings module (its imports cost a
    third of a second at start); anything unreadable is the full parse's to report."""
    from ..config.environment import config_dir

    try:
        loaded = json.loads((config_dir() / "settings.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


class InlineCompletions:
    """The server's completions: the engine, the settings it last read, what is advertised,
    and each request's timings (agentls's own time beside the model's)."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server
        self.enabled_at_start = False
        self._engine: Engine | None = None
        self._settings: Settings | None = None
        self.registered = False
        self._refreshing: asyncio.Future[None] | None = None
        self.timings: deque[tuple[float, float]] = deque(maxlen=1000)
        """(seconds in the handler, seconds of them in the model's exchange), per answer."""

    def answered_initialize(self, capabilities: types.ServerCapabilities) -> None:
        """Keep `inlineCompletionProvider` in the initialize answer only when enabled."""
        source = self.server.initial_options() if self.server.token is None else {}
        chosen = source.get("completions", _light_user_settings().get("completions"))
        try:
            self.enabled_at_start = completion_settings.parse(chosen or {}).enabled
        except ValueError:  # reported by the full parse, at the first settings read
            self.enabled_at_start = False
        if not self.enabled_at_start:
            capabilities.inline_completion_provider = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            from ..completions.engine import Engine

            self._engine = Engine()
        return self._engine

    async def settings(self) -> Settings:
        """The settings last read; read at the first request (once, however many wait)."""
        if self._settings is None:
            if self._refreshing is None or self._refreshing.done():
                self.refresh_soon()
            assert self._refreshing is not None
            await asyncio.shield(self._refreshing)
        assert self._settings is not None
        return self._settings

    async def refresh(self) -> None:
        """Read the settings again; register or withdraw the capability if that changed."""
        self._settings = await self.server.settings()
        enabled = self._settings.completions.enabled
        if enabled and not self.enabled_at_start and not self.registered:
            self.registered = await self._register(True)
        elif not enabled and self.registered:
            self.registered = not await self._register(False)

    async def _register(self, register: bool) -> bool:
        """Whether the client took the (un)registration; a client without dynamic
        registration for inline completions is not asked."""
        document = self.server.client_capabilities.text_document
        inline = document.inline_completion if document else None
        if not (inline and inline.dynamic_registration):
            return False
        method = types.TEXT_DOCUMENT_INLINE_COMPLETION
        try:
            if register:
                await self.server.client_register_capability_async(
                    types.RegistrationParams(
                        [types.Registration(REGISTRATION, method, {"documentSelector": None})]
                    )
                )
            else:
                await self.server.client_unregister_capability_async(
                    types.UnregistrationParams([types.Unregistration(REGISTRATION, method)])
                )
        except Exception as error:  # the client's refusal: completions stay as they were
            log.warning("client/%sCapability failed: %s", "register" if register else "un", error)
            return False
        return True

    def folders(self) -> list[Path]:
        workspace = self.server.workspace
        paths = [to_fs_path(folder.uri) for folder in workspace.folders.values()]
        if not paths and workspace.root_path:
            paths = [workspace.root_path]
        return [Path(path) for path in paths if path]

    async def complete(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        started = time.perf_counter()
        await self.server.prove()
        uri = params.text_document.uri
        document = self.server.workspace.text_documents.get(uri)
        if document is None:  # not open: no buffer of the user's to complete
            return types.InlineCompletionList(items=[])
        settings = await self.settings()
        if not settings.completions.enabled:
            return types.InlineCompletionList(items=[])
        from ..completions.engine import Config, Request
        from .positions import PositionFinder

        text = document.source
        offset = document.offset_at_position(params.position)
        path = to_fs_path(uri) if uri.startswith("file:") else None
        request = Request(uri, text, offset, Path(path) if path else None)
        config = Config(
            settings.completions,
            settings.provider,
            settings.base_url,
            settings.model,
            settings.permissions,
        )
        outcome = await self.engine.complete(request, config, self.folders())
        self._report(outcome)
        finder = PositionFinder(text, document.position_codec)
        items = [
            types.InlineCompletionItem(
                insert_text=found.text,
                range=types.Range(finder.position(found.start), finder.position(found.end)),
            )
            for found in sorted(outcome.suggestions, key=lambda s: (s.start, s.end))
        ]
        if items:
            self.timings.append((time.perf_counter() - started, outcome.model_seconds))
        return types.InlineCompletionList(items=items)

    def _report(self, outcome: Outcome) -> None:
        problem = outcome.problem
        if problem is not None and problem not in self.server.warned:
            self.server.warned.add(problem)
            self.server.show(types.MessageType.Warning, problem)

    def refresh_soon(self) -> None:
        self._refreshing = asyncio.ensure_future(self.refresh())
        self._refreshing.add_done_callback(_log_failure)

    def closed(self, uri: str) -> None:
        if self._engine is not None:
            self._engine.supersession.supersede(uri)


async def inline_completion(
    ls: AgentServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    return await ls.completions.complete(params)


def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.completions.closed(params.text_document.uri)


def did_change_configuration(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
    """The settings are read again for completions (a task pulls its own at its start)."""
    if ls.completions.enabled_at_start or ls.completions.registered or _may_enable():
        ls.completions.refresh_soon()


def _may_enable() -> bool:
    chosen = _light_user_settings().get("completions")
    return isinstance(chosen, dict) and chosen.get("enabled") is True


def _log_failure(done: asyncio.Future[None]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.warning("reading the settings for completions failed: %s", done.exception())
