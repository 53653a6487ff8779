"""The real agentls server, built by `make_server()`, driven in this process over an in-memory
connection: the same JSON-RPC bytes as over stdio, without starting Python and importing the
SDK for every test. Tests of what only a process shows (exit, signals, a closed pipe, the
command line) start the real process instead (`editor(..., process=True)`, `lsp_pipe`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from unittest import mock

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.server import make_server
from pygls.client import JsonRPCClient
from pygls.io_ import run_async

log = logging.getLogger(__name__)


class _Direction:
    """One direction of the connection: what one side writes, the other side reads; each
    message decoded into `seen` too, when given."""

    def __init__(self, seen: list[dict[str, Any]] | None = None) -> None:
        self.reader = asyncio.StreamReader()
        self.seen = seen

    def write(self, data: bytes) -> None:
        if self.seen is not None:  # pygls writes each message whole: its headers, then JSON
            self.seen.append(json.loads(data.partition(b"\r\n\r\n")[2]))
        if not self.reader.at_eof():
            self.reader.feed_data(data)

    def close(self) -> None:
        if not self.reader.at_eof():
            self.reader.feed_eof()


class InProcessServer:
    """A server connected to `client` in this event loop; `close()` ends the connection.
    `received` gets every message the server sends, as the JSON on the wire."""

    def __init__(self, client: JsonRPCClient, received: list[dict[str, Any]] | None = None) -> None:
        self.server: AgentServer = make_server()
        self._to_server = _Direction()
        self._to_client = _Direction(received)
        # pygls's server loop reads until this is set (start_io makes it; we do not call it).
        self.server._stop_event = threading.Event()
        self.server.protocol.set_writer(self._to_client)
        client.protocol.set_writer(self._to_server)
        client.exit = _refuse_exit  # type: ignore[method-assign]
        self._tasks = [
            asyncio.create_task(
                run_async(
                    stop_event=self.server._stop_event,
                    reader=self._to_server.reader,
                    protocol=self.server.protocol,
                    logger=log,
                    error_handler=self.server.report_server_error,
                )
            ),
            asyncio.create_task(
                run_async(
                    stop_event=client._stop_event,
                    reader=self._to_client.reader,
                    protocol=client.protocol,
                    logger=log,
                    error_handler=client.report_server_error,
                )
            ),
        ]

    async def close(self) -> None:
        """What the server sees when the editor goes away after `shutdown` (never `exit`,
        which ends the process it runs in)."""
        self._to_server.close()
        self._to_client.close()
        if self.server.cancel():
            await asyncio.sleep(0)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        running = self.server.running
        if running is not None:
            await asyncio.gather(running.task, return_exceptions=True)
        # In this loop, before it closes: else the SDK's connections are collected later, in
        # another test, and asyncio logs that their loop is gone.
        await self.server.clients.close()
        self.server.shutdown()


def _refuse_exit(*_: object) -> None:
    raise AssertionError("`exit` ends the server's process, here the tests': use process=True")


@contextmanager
def server_environment(env: Mapping[str, str]) -> Iterator[None]:
    """The variables a started server would have had, for as long as the server runs here."""
    with mock.patch.dict(os.environ, dict(env)):
        yield
