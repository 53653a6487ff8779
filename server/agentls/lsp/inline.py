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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from ..completions import settings as completion_settings
from .inline_shapes import completion_items, plain

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from ..completions.engine import Config, Engine, Outcome
    from ..settings.assembly import Settings
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
    and the open documents' last texts (for the edit history)."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server
        self.enabled_at_start = False
        self._engine: Engine | None = None
        self._settings: Settings | None = None
        self.registered = False
        self._refreshing: asyncio.Future[None] | None = None
        self._seen: dict[str, str] = {}
        """Each open document's text as of its last change (while next edits may be on)."""

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
        if not self._tracking():
            self._seen.clear()
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
            log.warning(
                "client/%sCapability failed: %s", "register" if register else "unregister", error
            )
            return False
        return True

    def folders(self) -> list[Path]:
        workspace = self.server.workspace
        paths = [to_fs_path(folder.uri) for folder in workspace.folders.values()]
        if not paths and workspace.root_path:
            paths = [workspace.root_path]
        return [Path(path) for path in paths if path]

    async def complete(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        uri = params.text_document.uri
        asked = await self._ask(uri, params.position, fill=True)
        if asked is None:
            return types.InlineCompletionList(items=[])
        outcome, text, document = asked
        return types.InlineCompletionList(
            items=completion_items(outcome, text, document.position_codec, params.position.line)
        )

    async def inline_edit(self, raw: Any) -> dict[str, Any]:
        """Copilot LS's `textDocument/copilotInlineEdit`: the next edits only."""
        from ..completions.copilot_inline_edit import (
            InlineEditParamsError,
            inline_edits,
            parse_params,
        )

        try:
            asked_for = parse_params(plain(raw))
        except InlineEditParamsError as error:
            raise JsonRpcInvalidParams(str(error)) from None
        document = self.server.workspace.text_documents.get(asked_for.uri)
        if document is None or document.version != asked_for.version:
            return {"edits": []}  # not open, or changed since: its edits would be stale
        position = types.Position(asked_for.line, asked_for.character)
        asked = await self._ask(asked_for.uri, position, fill=False)
        if asked is None:
            return {"edits": []}
        outcome, text, document = asked
        return inline_edits(
            outcome.edits, text, asked_for.uri, asked_for.version, document.position_codec
        )

    async def _ask(
        self, uri: str, position: types.Position, fill: bool
    ) -> tuple[Outcome, str, TextDocument] | None:
        """The engine's outcome for an open document's buffer and cursor; None when the
        document is not open or completions are off."""
        await self.server.prove()
        document = self.server.workspace.text_documents.get(uri)
        if document is None:  # not open: no buffer of the user's to complete
            return None
        settings = await self.settings()
        if not settings.completions.enabled:
            return None
        from ..completions.engine import Request

        text = document.source
        offset = document.offset_at_position(position)
        request = Request(uri, text, offset, position.line, _path(uri))
        outcome = await self.engine.complete(request, _config(settings), self.folders(), fill)
        self._report(outcome)
        return outcome, text, document

    def opened(self, uri: str, text: str) -> None:
        if self._tracking():
            self._seen[uri] = text

    def changed(self, uri: str, after: str) -> None:
        """Feed the edit history (whole texts before and after one didChange)."""
        if not self._tracking():
            self._seen.pop(uri, None)
            return
        before, self._seen[uri] = self._seen.get(uri), after
        if before is None:  # tracked from now on (next edits were turned on since it opened)
            return
        if self._settings is not None:
            self._record(uri, before, after, self._settings)
        else:  # the settings arrive with the first request; the edits wait for them in order
            recording = asyncio.ensure_future(self._record_later(uri, before, after))
            recording.add_done_callback(_log_failure)

    async def _record_later(self, uri: str, before: str, after: str) -> None:
        self._record(uri, before, after, await self.settings())

    def _record(self, uri: str, before: str, after: str, settings: Settings) -> None:
        config = _config(settings)
        self.engine.record(uri, _path(uri), before, after, config, self.folders())

    def _tracking(self) -> bool:
        """Whether completions may be on: only then are documents' texts kept."""
        if self._settings is not None:
            options = self._settings.completions
            return options.enabled and options.next_edit
        return self.enabled_at_start or self.registered

    def _report(self, outcome: Outcome) -> None:
        problem = outcome.problem
        if problem is not None and problem not in self.server.warned:
            self.server.warned.add(problem)
            self.server.show(types.MessageType.Warning, problem)

    def refresh_soon(self) -> None:
        self._refreshing = asyncio.ensure_future(self.refresh())
        self._refreshing.add_done_callback(_log_failure)

    def closed(self, uri: str) -> None:
        self._seen.pop(uri, None)
        if self._engine is not None:
            self._engine.forget(uri)


async def inline_completion(
    ls: AgentServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    return await ls.completions.complete(params)


async def copilot_inline_edit(ls: AgentServer, params: Any) -> dict[str, Any]:
    return await ls.completions.inline_edit(params)


def did_open(ls: AgentServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.completions.opened(params.text_document.uri, params.text_document.text)


def did_change(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    document = ls.workspace.text_documents.get(uri)
    if document is not None:
        ls.completions.changed(uri, document.source)


def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.completions.closed(params.text_document.uri)


def did_change_configuration(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
    """The settings are read again for completions (a task pulls its own at its start)."""
    if ls.completions.enabled_at_start or ls.completions.registered or _may_enable():
        ls.completions.refresh_soon()


def _path(uri: str) -> Path | None:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def _config(settings: Settings) -> Config:
    from ..completions.engine import Config

    return Config(
        settings.completions,
        settings.provider,
        settings.base_url,
        settings.model,
        settings.permissions,
    )


def _may_enable() -> bool:
    chosen = _light_user_settings().get("completions")
    return isinstance(chosen, dict) and chosen.get("enabled") is True


def _log_failure(done: asyncio.Future[None]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.warning("reading the settings for completions failed: %s", done.exception())
