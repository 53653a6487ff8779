"""Serving LSP on TCP: each connection is its own server (session, workspace folder, running
task), and only the user who started agentls may connect (docs/security.md, "TCP").

pygls's own TCP server shares one server between connections and stops for good when any
connection ends; a second client took over the first one's session.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from pygls.io_ import run_async

from . import tcp_token
from .server import make_server

log = logging.getLogger(__name__)

_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_LSP_HEADERS = (b"content-length:", b"content-type:")
FIRST_LINE_SECONDS = 60.0
"""How long a new connection may take to send its first header."""


def can_check_peers() -> bool:
    """Whether this system shows who owns a local socket (Linux's /proc/net/tcp)."""
    return _TABLES[0].exists()


def _address(field: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """An address of /proc/net/tcp{,6}: hex words in the kernel's byte order, then the port."""
    host, port = field.split(":")
    raw = bytes.fromhex(host)
    # Each 32-bit word is written in host byte order.
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(raw)
    return _unmapped(address), int(port, 16)


def _unmapped(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _endpoint(name: Any) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    return _unmapped(ipaddress.ip_address(name[0].split("%")[0])), int(name[1])


def peer_uid(connection: socket.socket) -> int | None:
    """The user owning the other end of an accepted connection, when that end is a socket of
    this machine; None for a remote peer (or one in another network namespace)."""
    theirs, ours = _endpoint(connection.getpeername()), _endpoint(connection.getsockname())
    for table in _TABLES:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # sl, local_address, rem_address, st, queues, tr, retrnsmt, uid, ...
            if _address(fields[1]) == theirs and _address(fields[2]) == ours:
                return int(fields[7])
    return None


class _Replaying:
    """The connection's reader, with its first line (read to check it) given back first."""

    def __init__(self, first: bytes, reader: asyncio.StreamReader) -> None:
        self.first: bytes | None = first
        self.reader = reader

    async def readline(self) -> bytes:
        if self.first is not None:
            line, self.first = self.first, None
            return line
        return await self.reader.readline()

    async def readexactly(self, n: int) -> bytes:
        return await self.reader.readexactly(n)


async def _serve_connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: str
) -> None:
    name = writer.get_extra_info("peername")
    try:
        connection = writer.get_extra_info("socket")
        uid = peer_uid(connection) if connection is not None else None
        if uid != os.getuid():
            log.warning("refused a connection from %s (user %s, not %s)", name, uid, os.getuid())
            return
        # A connection that never says anything does not hold its coroutine for ever.
        first = await asyncio.wait_for(reader.readline(), FIRST_LINE_SECONDS)
        if not first.lower().startswith(_LSP_HEADERS):
            # A probe, or an HTTP request a web page made to localhost: not LSP.
            log.warning("closed a connection from %s that does not speak LSP", name)
            return
        server = make_server()
        server.token = token
        stop = threading.Event()

        def leave(code: int) -> None:
            stop.set()
            writer.close()

        server.on_exit = leave
        server.protocol.set_writer(writer)
        try:
            await run_async(
                stop_event=stop,
                reader=_Replaying(first, reader),
                protocol=server.protocol,
                logger=log,
                error_handler=server.report_server_error,
            )
        finally:
            # The client is gone: its task must not go on working for nobody.
            server.cancel()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError) as error:
        log.info("connection from %s ended: %s", name, error)
    finally:
        writer.close()


async def serve(host: str, port: int) -> None:
    """Accept connections until the process is stopped; print where it listens."""
    token: list[str] = []
    listener = await asyncio.start_server(
        lambda reader, writer: _serve_connection(reader, writer, token[0]),
        host,
        port,
        start_serving=False,  # until the token is written
    )
    where = ", ".join("{}:{}".format(*s.getsockname()[:2]) for s in listener.sockets)
    secret, path = tcp_token.write(listener.sockets[0].getsockname()[1])
    token.append(secret)
    await listener.start_serving()
    print(
        f"agentls: serving LSP on {where} (TCP), a session per connection, "
        f"for user {os.getuid()} only, each showing the token in {path} as agentls.token; "
        "Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    try:
        async with listener:
            await listener.serve_forever()
    finally:
        path.unlink(missing_ok=True)
