"""The language server's state: the session, the running task, the settings."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..agent.conversation import Conversation
from ..config.settings import Settings, parse
from ..lifetime import exit_now
from ..models.anthropic import ClientCache
from ..permissions.modes import SessionMode
from .protocol import AgentProtocol

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803


@dataclass
class RunningTask:
    task: asyncio.Future[Any]
    request_id: Any
    steerable: bool
    """Whether the user may add text to it (a task, not a compaction)."""


class AgentServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("agentls", __version__, protocol_cls=AgentProtocol)
        self.session = Conversation()
        self.mode: SessionMode | None = None
        """The session's mode once switched (`agent.setMode`, an approved plan); None: the
        `mode` setting's."""
        self.running: RunningTask | None = None
        self.clients = ClientCache()
        self.initialization_options: Any = None
        self.cancelled_requests: deque[Any] = deque(maxlen=32)
        self.warned: set[str] = set()
        """Warnings already shown, each shown once per server (one editor session)."""
        self.on_exit: Callable[[int], None] = exit_now
        """What the client's `exit` ends: the process on stdio, the connection on TCP."""

    def leave(self, code: int) -> None:
        self.on_exit(code)

    def cancel(self) -> bool:
        if self.running is None or self.running.task.done():
            return False
        self.running.task.cancel()
        return True

    def cancel_request(self, request_id: Any) -> None:
        if self.running is not None and self.running.request_id == request_id:
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

    async def settings(self) -> Settings:
        """Settings from initializationOptions, overridden by workspace/configuration."""
        options = self.initialization_options
        raw: dict[str, Any] = {}
        if isinstance(options, dict) and isinstance(options.get("agentls"), dict):
            raw.update(options["agentls"])
        workspace = self.client_capabilities.workspace
        if workspace and workspace.configuration:
            try:
                pulled = await self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="agentls")])
                )
                if pulled and isinstance(pulled[0], dict):
                    raw.update(pulled[0])
            except Exception as error:  # a client that fails here still gets a working task
                log.warning("workspace/configuration failed: %s", error)
        settings, problems = parse(raw)
        for problem in problems:
            self.show(types.MessageType.Warning, problem)
        return settings

    def show(self, kind: types.MessageType, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"agentls: {message}"))
