"""The language server driven in process: messages in through the protocol, out to a list.

For tests of what the server says (notifications, progress, answers) without the seconds a
server process takes to start.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.server import make_server


class InProcessEditor:
    def __init__(self, root: Path, settings: dict[str, Any] | None = None) -> None:
        self.server: AgentServer = make_server()
        self.sent: list[dict[str, Any]] = []
        self.server.protocol.set_writer(self, include_headers=False)
        self.root = root
        self.settings = {"approveCommands": "always", **(settings or {})}
        self._ids = itertools.count(1)

    # The protocol's writer.
    def write(self, data: str | bytes) -> None:
        message = json.loads(data)
        self.sent.append(message)
        if message.get("method") == "window/workDoneProgress/create":
            asyncio.get_running_loop().call_soon(
                self.receive, {"id": message["id"], "result": None}
            )

    def close(self) -> None:
        pass

    def receive(self, message: dict[str, Any]) -> None:
        protocol = self.server.protocol
        protocol.handle_message(
            json.loads(
                json.dumps({"jsonrpc": "2.0", **message}), object_hook=protocol.structure_message
            )
        )

    def send(self, method: str, params: Any) -> int:
        """Send a request; returns its id."""
        request_id = next(self._ids)
        self.receive({"id": request_id, "method": method, "params": params})
        return request_id

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The server's answer to a request: {"result": ...} or {"error": ...}."""
        while not (
            found := [m for m in self.sent if m.get("id") == request_id and "method" not in m]
        ):
            await asyncio.sleep(0.01)
        return found[0]

    async def start(self) -> InProcessEditor:
        capabilities = {"window": {"workDoneProgress": True}}
        await self.answer(
            self.send(
                "initialize",
                {
                    "capabilities": capabilities,
                    "workspaceFolders": [{"uri": self.root.as_uri(), "name": "root"}],
                    "initializationOptions": {"agentls": self.settings},
                },
            )
        )
        self.receive({"method": "initialized", "params": {}})
        return self

    def command(self, name: str, argument: dict[str, Any], token: str | None = None) -> int:
        params: dict[str, Any] = {"command": name, "arguments": [argument]}
        if token is not None:
            params["workDoneToken"] = token
        return self.send("workspace/executeCommand", params)

    def notifications(self, method: str) -> list[Any]:
        return [m["params"] for m in self.sent if m.get("method") == method and "id" not in m]

    def progress_messages(self, token: str) -> list[str]:
        return [
            p["value"]["message"]
            for p in self.notifications("$/progress")
            if p["token"] == token and "message" in p["value"]
        ]
