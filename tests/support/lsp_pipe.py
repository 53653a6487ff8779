"""The real server process on raw stdio pipes, for tests that cut the connection.

pytest-lsp's client owns its pipes and reports a server that goes away as an error; these
tests need to close the pipes, send signals and watch the process, so they speak JSON-RPC
themselves (a few lines of framing).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path


class JsonRpcPeer:
    """A minimal LSP client on a pair of streams (pipes or a TCP connection) that answers
    nothing itself but workspace/configuration, with `configuration` when it is set; it
    keeps every message it read in `received`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._next_id = 0
        self.configuration: dict[str, Any] | None = None
        self.received: list[dict[str, Any]] = []

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self._write({"method": method, "params": params})

    def send_request(self, method: str, params: Any) -> int:
        self._next_id += 1
        self._write({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    async def read(self) -> dict[str, Any]:
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if not length:
            raise EOFError("the server closed its output")
        message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
        self.received.append(message)
        if message.get("method") == "workspace/configuration" and self.configuration is not None:
            items = message["params"]["items"]
            answer = [self.configuration.get(item.get("section")) for item in items]
            self._write({"id": message["id"], "result": answer})
        return message

    async def wait_for(self, method: str | None = None, answer_to: int | None = None) -> Any:
        """The next server request or notification `method`, or the answer to a request."""
        while True:
            message = await self.read()
            if answer_to is not None and message.get("id") == answer_to and "method" not in message:
                return message
            if method is not None and message.get("method") == method:
                return message

    async def request(self, method: str, params: Any) -> Any:
        answer = await self.wait_for(answer_to=self.send_request(method, params))
        return answer.get("result")

    async def initialize(
        self,
        root: Path,
        capabilities: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        edits = {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": capabilities or {"workspace": edits},
                "workspaceFolders": [{"uri": from_fs_path(str(root)), "name": "root"}],
                "initializationOptions": {
                    "agentls": {"approveCommands": "always", **(settings or {})}
                },
            },
        )
        self.notify("initialized", {})


class ServerPipe(JsonRpcPeer):
    """`python -m agentls` on stdio."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__(process.stdout, process.stdin)
        self.process = process

    @classmethod
    async def start(
        cls, root: Path, api_url: str, settings: dict[str, Any] | None = None
    ) -> ServerPipe:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": api_url,
            "ANTHROPIC_API_KEY": "test-key-123",
            "XDG_CONFIG_HOME": str(root.parent / "config"),
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "agentls",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        pipe = cls(process)
        await pipe.initialize(root, settings=settings)
        return pipe

    def close_pipes(self) -> None:
        """What the server sees when the editor exits: its stdin ends, its stdout is gone."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.stdout.feed_eof()
        transport = self.process._transport  # type: ignore[attr-defined]
        pipe = transport.get_pipe_transport(1)
        if pipe is not None:
            pipe.close()
