"""A hostile language server's output, read by `eyes/connection.py`: whatever it sends that
is not bounded LSP ends the connection at once, so what waits on it hears so, and the task
names the server out instead of waiting on it edit after edit."""

from __future__ import annotations

import asyncio

import pytest
from agentls.eyes.connection import Connection, ServerGone


class _Sink:
    """The server's input: agentls's messages are dropped."""

    def write(self, data: bytes) -> None:
        pass

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def _framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize(
    "output",
    [
        pytest.param(b"X" * (2 << 20), id="a header line longer than the reader's limit"),
        pytest.param(_framed(b"[" * 100_000), id="JSON nested past Python's recursion limit"),
        pytest.param(b"X-Filler: 1\r\n" * 10_000, id="a header that never ends"),
        pytest.param(_framed(b"{not json"), id="invalid JSON"),
        pytest.param(b"Content-Length: 99999999999\r\n\r\n", id="a body too long"),
    ],
)
async def test_output_that_is_not_bounded_lsp_ends_the_connection(output: bytes) -> None:
    reader = asyncio.StreamReader(limit=1 << 20)  # as the server's stdout is read
    connection = Connection(reader, _Sink(), None)  # type: ignore[arg-type]
    reader.feed_data(output)
    with pytest.raises(ServerGone):
        await asyncio.wait_for(connection.request("initialize", {}), 5)
    assert connection.gone is not None
    await connection.close()
