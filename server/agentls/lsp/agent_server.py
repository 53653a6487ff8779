"""The language server's state: the session, the running task, the settings."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..serving.lifetime import exit_now
from . import tcp_token
from .inline import InlineCompletions
from .protocol import AgentProtocol

if TYPE_CHECKING:
    from ..agent.conversation import Conversation
    from ..models.anthropic import ClientCache
    from ..permissions.modes import SessionMode
    from ..settings.assembly import Settings

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803
TOKEN = "token"
"""`agentls.token`: what a TCP connection shows to prove it is the user's editor."""


@dataclass
class RunningTask:
    task: asyncio.Future[Any]
    request_id: Any
    steerable: bool
    """Whether the user may add text to it (a task, not a compaction)."""


class AgentServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("agentls", __version__, protocol_cls=AgentProtocol)
        self._session: Conversation | None = None
        self.mode: SessionMode | None = None
        """The session's mode once switched (`agent.setMode`, an approved plan); None: the
        `mode` setting's."""
        self.running: RunningTask | None = None
        self._clients: ClientCache | None = None
        self.initialization_options: Any = None
        self.cancelled_requests: deque[Any] = deque(maxlen=32)
        self.chats: dict[Any, asyncio.Future[Any]] = {}
        """The `agent.chat` answers being streamed, by request id (they run beside a task)."""
        self.warned: set[str] = set()
        """Warnings already shown, each shown once per server (one editor session)."""
        self.on_exit: Callable[[int], None] = exit_now
        """What the client's `exit` ends: the process on stdio, the connection on TCP."""
        self.token: str | None = None
        """On TCP, the token the client must show before any command; None on stdio, where
        the client is the editor that started the server."""
        self._proof: asyncio.Future[bool] | None = None
        self.completions = InlineCompletions(self)

    # The conversation, the settings and the model's clients are made at their first use:
    # the editor waits for the `initialize` answer, which needs none of them.
    @property
    def session(self) -> Conversation:
        if self._session is None:
            from ..agent.conversation import Conversation

            self._session = Conversation()
        return self._session

    @session.setter
    def session(self, session: Conversation) -> None:
        self._session = session

    @property
    def clients(self) -> ClientCache:
        """The model's SDK clients, kept from one task to the next."""
        if self._clients is None:
            from ..models.anthropic import ClientCache

            self._clients = ClientCache()
        return self._clients

    def leave(self, code: int) -> None:
        self.on_exit(code)

    def cancel(self) -> bool:
        if self.running is None or self.running.task.done():
            return False
        self.running.task.cancel()
        return True

    def cancel_request(self, request_id: Any) -> None:
        chat = self.chats.get(request_id)
        if chat is not None:
            chat.cancel()
        elif self.running is not None and self.running.request_id == request_id:
            self.cancel()
        else:
            # It may be an agent.runTask whose handler has not started yet.
            self.cancelled_requests.append(request_id)

    def root(self) -> Path:
        folders = self.workspace.folders
        if folders:
            return Path(to_fs_path(next(iter(folders.values())).uri) or ".")
        if self.workspace.root_path:
            return Path(self.workspace.root_path)
        raise JsonRpcException("agentls needs a workspace folder (open a folder).", REQUEST_FAILED)

    def answered_initialize(self, capabilities: types.ServerCapabilities) -> None:
        """The initialize answer's capabilities, shaped by the settings known at start."""
        self.completions.answered_initialize(capabilities)

    def initial_options(self) -> dict[str, Any]:
        """The `agentls` object of the editor's initializationOptions (empty if none)."""
        options = self.initialization_options
        if isinstance(options, dict) and isinstance(options.get("agentls"), dict):
            return dict(options["agentls"])
        return {}

    async def _configuration(self) -> dict[str, Any]:
        """The client's answer to workspace/configuration for `agentls`, if it answers."""
        workspace = self.client_capabilities.workspace
        if not (workspace and workspace.configuration):
            return {}
        try:
            pulled = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="agentls")])
            )
        except Exception as error:  # a client that fails here still gets a working task
            log.warning("workspace/configuration failed: %s", error)
            return {}
        return dict(pulled[0]) if pulled and isinstance(pulled[0], dict) else {}

    def begin_proof(self) -> None:
        """On TCP, check the client's token now (a client without one is closed at once)."""
        if self.token is not None and self._proof is None:
            self._proof = asyncio.ensure_future(self._check_token())

    async def prove(self) -> None:
        """Return once the client has shown the token (at once on stdio); raise, with the
        connection closed, if it has not."""
        if self.token is None:
            return
        self.begin_proof()
        assert self._proof is not None
        if not await asyncio.shield(self._proof):
            raise JsonRpcException("this connection did not show the token", REQUEST_FAILED)

    async def _check_token(self) -> bool:
        assert self.token is not None
        sent = self.initial_options().get(TOKEN)
        if sent is None:
            sent = (await self._configuration()).get(TOKEN)
        if tcp_token.shown(self.token, sent):
            return True
        log.warning("closed a connection that did not show the token")
        self.show(
            types.MessageType.Error,
            "this connection did not show the token that `agentls --tcp` wrote to "
            f"{tcp_token.folder()} (setting agentls.token); closing it",
        )
        self.leave(1)
        return False

    async def raw_settings(self) -> tuple[dict[str, Any], list[str]]:
        """The settings object as this client may set it (what `settings` parses), and the
        user-only keys it tried to set and may not; on TCP the user-only ones come from the
        user's settings file, not from here."""
        from ..settings.assembly import USER_ONLY, flattened

        initial, pulled = flattened(self.initial_options()), flattened(await self._configuration())
        trusted = {k: v for k, v in initial.items() if k in USER_ONLY} if self.token is None else {}
        raw = {k: v for k, v in {**initial, **pulled}.items() if k not in USER_ONLY}
        raw.pop(TOKEN, None)
        ignored = sorted(
            {
                key
                for source in (initial, pulled)
                for key, value in source.items()
                if key in USER_ONLY and (key not in trusted or trusted[key] != value)
            }
        )
        return {**raw, **trusted}, ignored

    async def settings(self) -> Settings:
        """The user's settings file, under initializationOptions, under workspace/configuration
        (the editor's win, key by key); the user-only ones (docs/security.md, "Settings from a
        client") only from the file and the editor's initializationOptions on stdio, and on
        TCP from the user's settings file."""
        from ..config import user_settings
        from ..settings.assembly import flattened, parse, with_user_only

        raw, ignored = await self.raw_settings()
        own_raw, problems = user_settings.read()
        settings, invalid = parse({**flattened(own_raw), **raw})
        problems += invalid
        if self.token is not None:
            settings = with_user_only(settings, parse(own_raw)[0])
            where = f"on TCP they come from {user_settings.settings_path()} only"
        else:
            where = "they come from the editor's own settings (initializationOptions) only"
        if ignored:
            names = ", ".join(f"agentls.{key}" for key in ignored)
            problems.append(f"{names} from this client ignored: user-only settings, {where}")
        for problem in problems:
            if problem not in self.warned:
                self.warned.add(problem)
                self.show(types.MessageType.Warning, problem)
        return settings

    def show(self, kind: types.MessageType, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"agentls: {message}"))
