"""The ACP connection on stdio, with the routes SDK 0.12 lacks.

SDK 0.12 (the latest release) routes `session/resume` and `session/close` only with its
unstable protocol (which also routes `session/fork`: agentls answers that one
method-not-found itself), and routes neither `session/delete` nor `logout`, both stable in
the v1 schema. They are added to the router the connection dispatches on."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from acp.agent.connection import AgentSideConnection
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.meta import AGENT_METHODS
from acp.router import MessageRouter
from acp.schema import DeleteSessionRequest, LogoutRequest
from acp.stdio import stdio_streams
from acp.utils import normalize_result

CLOSE_WAIT = 5.0
"""Seconds the SDK's connection gets to close once ours is done; the process exits then."""


def add_routes(router: MessageRouter, agent: Any) -> None:
    router.route_request(
        AGENT_METHODS["session_delete"],
        DeleteSessionRequest,
        agent,
        "delete_session",
        adapt_result=normalize_result,
    )
    router.route_request(
        AGENT_METHODS["logout"], LogoutRequest, agent, "logout", adapt_result=normalize_result
    )


async def connect(agent: Any) -> None:
    """Serve `agent` on stdin/stdout until the client closes them."""
    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    connection = AgentSideConnection(
        agent, writer, reader, listening=False, use_unstable_protocol=True
    )
    router = connection._conn._handler
    if not isinstance(router, MessageRouter):
        raise TypeError("the ACP SDK's connection no longer dispatches on a MessageRouter")
    add_routes(router, agent)
    try:
        await connection.listen()
    finally:
        # Before the SDK closes: it cancels the request handlers and then awaits them, but
        # a prompt's handler answers a cancel (a `cancelled` turn) and then waits forever
        # to send that answer on the sender it has already stopped. Ours end first.
        await asyncio.shield(agent.close())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(connection.close()), CLOSE_WAIT)
