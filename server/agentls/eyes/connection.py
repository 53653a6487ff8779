"""JSON-RPC 2.0 with one language server over its stdin and stdout (LSP's base protocol:
a `Content-Length` header, a blank line, a JSON body), bounded before parsing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

MAX_MESSAGE = 32 * 1024 * 1024
"""A body larger than this ends the connection: no answer agentls needs is that big."""
_MAX_HEADER = 1024
_MAX_HEADER_LINES = 16
"""LSP names two header fields; a header of more lines is not LSP."""


class ServerGone(Exception):
    """The server closed its output, sent what is not LSP, or answered with an error."""


class Refused(ServerGone):
    """The server answered a request with an error: it is still there, for what else it
    serves (a navigation request it failed), but not past `initialize`."""


@dataclass
class Published:
    """A file's latest diagnostics as the server pushed them, and how many pushes came."""

    diagnostics: list[Any]
    version: int | None
    count: int


class Connection:
    """Requests, notifications and the server's pushed diagnostics over `reader`/`writer`;
    `settings` answer the server's `workspace/configuration` requests."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, settings: Any
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._settings = settings
        self._next = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.published: dict[str, Published] = {}
        self._changed = asyncio.Condition()
        self.gone: str | None = None
        """Why the connection ended, once it has."""
        self._task = asyncio.ensure_future(self._read_all())

    async def request(self, method: str, params: Any) -> Any:
        """The result of `method`; raises ServerGone."""
        if self.gone is not None:
            raise ServerGone(self.gone)
        self._next += 1
        ident = self._next  # its own: another request may be sent while it waits
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = answer
        try:
            await self._send({"id": ident, "method": method, "params": params})
            return await answer
        finally:
            self._pending.pop(ident, None)

    async def notify(self, method: str, params: Any) -> None:
        if self.gone is not None:
            raise ServerGone(self.gone)
        await self._send({"method": method, "params": params})

    async def published_after(self, uri: str, count: int, version: int) -> Published:
        """The first diagnostics of `uri` pushed after push number `count`, of `version` (or
        of no version); raises ServerGone."""
        async with self._changed:
            while True:
                if self.gone is not None:
                    raise ServerGone(self.gone)
                found = self.published.get(uri)
                if found and found.count > count and found.version in (None, version):
                    return found
                await self._changed.wait()

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task
        with contextlib.suppress(OSError, RuntimeError):
            self._writer.close()

    async def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        try:
            self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await self._writer.drain()
        except (OSError, RuntimeError) as error:
            raise ServerGone(f"its input closed ({error})") from None

    async def _read_all(self) -> None:
        try:
            while True:
                await self._dispatch(await self._read_one())
        except Exception as error:
            # Its output decides what fails here (a line past the reader's limit, JSON nested
            # past the recursion limit, what not yet): any failure ends it, or what waits on
            # it would wait its full timeout at every edit.
            reason = str(error) if isinstance(error, ServerGone) else "its output ended"
            await self.end(reason)

    async def end(self, reason: str) -> None:
        """Fail what waits on the server: it is gone for `reason`."""
        if self.gone is not None:
            return
        self.gone = reason
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(ServerGone(reason))
        async with self._changed:
            self._changed.notify_all()

    async def _read_one(self) -> Any:
        length = None
        for _ in range(_MAX_HEADER_LINES):
            line = await self._reader.readuntil(b"\n")
            if len(line) > _MAX_HEADER:
                raise ServerGone("it sent a header too long")
            if not line.strip():
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        else:
            raise ServerGone("it sent a header that does not end")
        if length is None or not 0 <= length <= MAX_MESSAGE:
            raise ServerGone("it sent a message without a length, or too long")
        return json.loads(await self._reader.readexactly(length))

    async def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        method, ident = message.get("method"), message.get("id")
        if method is None:
            answer = self._pending.get(ident) if isinstance(ident, int) else None
            if answer is not None and not answer.done():
                if "error" in message:
                    answer.set_exception(Refused(f"it answered {message['error']}"))
                else:
                    answer.set_result(message.get("result"))
        elif ident is not None:
            await self._answer(ident, method, message.get("params"))
        elif method == "textDocument/publishDiagnostics":
            await self._publish(message.get("params"))

    async def _answer(self, ident: Any, method: str, params: Any) -> None:
        """What a client answers a server's request: the settings it asks for, an empty
        yes to a registration or progress token, and not-found for anything else."""
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            await self._send({"id": ident, "result": [self._section(i) for i in items]})
        elif method in ("client/registerCapability", "window/workDoneProgress/create"):
            await self._send({"id": ident, "result": None})
        else:
            error = {"code": -32601, "message": f"{method} is not served"}
            await self._send({"id": ident, "error": error})

    def _section(self, item: Any) -> Any:
        value = self._settings
        section = item.get("section") if isinstance(item, dict) else None
        for key in section.split(".") if isinstance(section, str) and section else ():
            value = value.get(key) if isinstance(value, dict) else None
        return value

    async def _publish(self, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("uri"), str):
            return
        diagnostics = params.get("diagnostics")
        version = params.get("version")
        await self.record(
            params["uri"],
            diagnostics if isinstance(diagnostics, list) else [],
            version if isinstance(version, int) else None,
        )

    async def record(self, uri: str, diagnostics: list[Any], version: int | None) -> Published:
        """`uri`'s diagnostics now, pushed or pulled; who waits for them hears."""
        before = self.published.get(uri)
        found = self.published[uri] = Published(
            diagnostics, version, (before.count if before else 0) + 1
        )
        async with self._changed:
            self._changed.notify_all()
        return found
