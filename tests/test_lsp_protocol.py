"""The pygls protocol subclass, in process: what a wire test cannot time precisely."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.server import make_server
from fake_api import FakeAnthropic, reply, text


class Wire:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def write(self, data: str | bytes) -> None:
        self.sent.append(json.loads(data))

    def close(self) -> None:
        pass


def _receive(server: AgentServer, message: dict[str, Any]) -> None:
    protocol = server.protocol
    protocol.handle_message(
        json.loads(
            json.dumps({"jsonrpc": "2.0", **message}), object_hook=protocol.structure_message
        )
    )


async def test_early_cancel_and_no_growth_of_pending_futures(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(reply(text("the task ran")))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    server = make_server()
    wire = Wire()
    server.protocol.set_writer(wire, include_headers=False)
    _receive(
        server,
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "capabilities": {},
                "workspaceFolders": [{"uri": tmp_path.as_uri(), "name": "r"}],
            },
        },
    )
    await asyncio.sleep(0.05)
    _receive(server, {"method": "initialized", "params": {}})
    uri = (tmp_path / "a.py").as_uri()
    _receive(
        server,
        {
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x\n"}
            },
        },
    )
    for version in range(2, 300):
        _receive(
            server,
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": f"x = {version}\n"}],
                },
            },
        )
    await asyncio.sleep(0.1)
    assert len(server.protocol._request_futures) == 0

    # The cancel arrives before the command's handler has started.
    _receive(
        server,
        {
            "id": 7,
            "method": "workspace/executeCommand",
            "params": {"command": "agent.runTask", "arguments": [{"task": "hi"}]},
        },
    )
    _receive(server, {"method": "$/cancelRequest", "params": {"id": 7}})
    await asyncio.sleep(0.3)
    (answer,) = [m for m in wire.sent if m.get("id") == 7]
    assert answer["error"]["code"] == -32800
    assert server.running is None
    assert fake.requests == []
