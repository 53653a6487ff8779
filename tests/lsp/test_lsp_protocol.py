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


def _initialize(
    server: AgentServer, root: Path, capabilities: dict[str, Any], **settings: Any
) -> None:
    _receive(
        server,
        {
            "id": "init",
            "method": "initialize",
            "params": {
                "capabilities": capabilities,
                "workspaceFolders": [{"uri": root.as_uri(), "name": "r"}],
                "initializationOptions": {"agentls": settings},
            },
        },
    )
    _receive(server, {"method": "initialized", "params": {}})


async def test_cancel_while_the_client_is_asked_for_a_token_shows_no_error(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    server = make_server()
    wire = Wire()
    server.protocol.set_writer(wire, include_headers=False)
    # No sandbox, said so: the host's having one or not must not change what is shown.
    _initialize(server, tmp_path, {"window": {"workDoneProgress": True}}, sandbox="off")
    _receive(
        server,
        {
            "id": 1,
            "method": "workspace/executeCommand",
            "params": {"command": "agent.runTask", "arguments": [{"task": "hi"}]},
        },
    )
    for _ in range(100):
        asks = [m for m in wire.sent if m.get("method") == "window/workDoneProgress/create"]
        if asks:
            break
        await asyncio.sleep(0.05)
    (ask,) = asks
    _receive(
        server,
        {"id": 2, "method": "workspace/executeCommand", "params": {"command": "agent.cancel"}},
    )
    await asyncio.sleep(0.05)
    # The client's answer comes after the cancel.
    _receive(server, {"id": ask["id"], "result": None})
    await asyncio.sleep(0.1)
    (answer,) = [m for m in wire.sent if m.get("id") == 1]
    assert answer["result"]["status"] == "cancelled"
    shown = [m["params"]["message"] for m in wire.sent if m.get("method") == "window/showMessage"]
    assert shown == []
    assert fake.requests == []


async def test_eglot_start_and_whole_lines_selected(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    fake.script(reply(text("ok")))
    server = make_server()
    wire = Wire()
    server.protocol.set_writer(wire, include_headers=False)
    _initialize(server, tmp_path, {})
    # eglot sends this at every start; pygls warned of an unknown notification.
    _receive(server, {"method": "workspace/didChangeConfiguration", "params": {"settings": {}}})
    uri = (tmp_path / "a.py").as_uri()
    _receive(
        server,
        {
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x\ny\n"}
            },
        },
    )
    # The first line, selected whole: the selection ends at column 0 of the second.
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
    _receive(
        server,
        {
            "id": 1,
            "method": "workspace/executeCommand",
            "params": {
                "command": "agent.runTask",
                "arguments": [{"task": "hi", "uri": uri, "selection": selection}],
            },
        },
    )
    for _ in range(200):
        if any(m.get("id") == 1 for m in wire.sent):
            break
        await asyncio.sleep(0.05)
    (request,) = fake.requests
    task = request.body["messages"][0]["content"][-1]["text"]
    assert "Selected lines 1-1:\n```\nx\n\n```" in task
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []
