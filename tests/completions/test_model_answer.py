"""A hostile model server's answer to a completion: one that never ends (a byte at a time,
each within the read timeout) is given up within the answer's deadline, its connection
closed, and the completion is nothing."""

from __future__ import annotations

import asyncio
import time

import pytest
from agentls.completions import wire
from agentls.completions.route import route
from agentls.completions.settings import CompletionSettings
from agentls.completions.window import Window


async def test_an_answer_that_never_ends_is_given_up_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed = asyncio.Event()

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
        try:
            while True:  # a byte every 0.1 s: no read ever times out
                writer.write(b"1\r\n \r\n")
                await writer.drain()
                await asyncio.sleep(0.1)
        except (ConnectionError, OSError):
            closed.set()

    monkeypatch.setattr(wire, "ANSWER_SECONDS", 1.0)
    server = await asyncio.start_server(trickle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    options = CompletionSettings(model="ollama/m", base_url=f"http://127.0.0.1:{port}")
    found = route(options, None, None, None, {})
    client = wire.ModelClient()
    started = time.monotonic()
    try:
        with pytest.raises(wire.ModelFailed, match="did not answer within"):
            await asyncio.wait_for(client.fill(found, Window("x = ", ""), 16), 10)
        assert time.monotonic() - started < 3
        await asyncio.wait_for(closed.wait(), 3)  # its connection is closed
    finally:
        await client.close()
        server.close()
