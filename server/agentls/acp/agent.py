"""The ACP agent: what the protocol's SDK calls, each session request handed to the sessions
(`sessions.py`).

`initialize` is answered from this module alone: the sessions' modules (the loop, the tools,
the store, some 0.3 s of imports) are loaded on the first request that needs them, so a
client is answered about as soon as a bare SDK agent answers it (`python -m bench`)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import acp
from acp.schema import (
    AgentAuthCapabilities,
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    LogoutCapabilities,
    LogoutResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from .. import __version__
from . import auth
from .connection import connect

if TYPE_CHECKING:
    from .sessions import AcpSessions

log = logging.getLogger(__name__)


class AcpAgent:
    def __init__(self) -> None:
        self.client: Any = None
        self.capabilities: ClientCapabilities | None = None
        self._sessions: AcpSessions | None = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    @property
    def sessions(self) -> AcpSessions:
        if self._sessions is None:
            from .sessions import AcpSessions

            self._sessions = AcpSessions(self.client, self.capabilities)
        return self._sessions

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True),
                mcp_capabilities=McpCapabilities(http=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities(),
                ),
                auth=AgentAuthCapabilities(logout=LogoutCapabilities()),
            ),
            auth_methods=auth.methods(client_capabilities),
            agent_info=Implementation(name="agentls", title="agentls", version=__version__),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        return await self.sessions.new_session(cwd, mcp_servers)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        return await self.sessions.load_session(cwd, session_id, mcp_servers)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        return await self.sessions.resume_session(session_id, cwd, mcp_servers)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        return await self.sessions.list_sessions(cwd)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        return await self.sessions.set_session_mode(session_id, mode_id)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        return await self.sessions.prompt(session_id, prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if self._sessions is not None:  # no session yet: nothing runs
            await self._sessions.cancel(session_id)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        return await self.sessions.close_session(session_id)

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        return await self.sessions.delete_session(session_id)

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        await asyncio.to_thread(auth.authenticate, method_id)
        return AuthenticateResponse()

    async def logout(self, **kwargs: Any) -> LogoutResponse:
        await asyncio.to_thread(auth.logout)
        return LogoutResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        return await self.sessions.set_config_option(session_id, config_id, value)

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        raise acp.RequestError.method_not_found("session/fork")

    async def close(self) -> None:
        """The client is gone: end what runs (`AcpSessions.close`)."""
        if self._sessions is not None:
            await self._sessions.close()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignored the ACP notification %s", method)


def serve() -> None:
    """Serve ACP on stdin/stdout until the client closes it."""
    asyncio.run(connect(AcpAgent()))
