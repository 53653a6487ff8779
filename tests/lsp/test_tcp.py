"""`agentls --tcp`: a session per connection, probes survived, other users and web pages
refused. The real server process on a real port, clients speaking JSON-RPC themselves."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from agentls import __version__
from agentls.lsp import tcp
from doubles import results
from fake_api import FakeAnthropic, reply, text, tool_use
from lsp_pipe import JsonRpcPeer

pytestmark = pytest.mark.skipif(not tcp.can_check_peers(), reason="needs /proc/net/tcp (Linux)")


@asynccontextmanager
async def tcp_server(
    root: Path, api_url: str
) -> AsyncIterator[tuple[int, asyncio.StreamReader, str]]:
    """The server, the port it took, its stderr and the token it wrote."""
    (root / "run").mkdir(mode=0o700)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "test-key-123",
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_RUNTIME_DIR": str(root / "run"),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "--tcp",
        "--port",
        "0",
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    assert process.stderr is not None
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        found = re.search(r"serving LSP on 127\.0\.0\.1:(\d+).* the token in (\S+) ", line)
        assert found, line
        token = Path(found.group(2)).read_text().strip()
        assert Path(found.group(2)).stat().st_mode & 0o777 == 0o600
        yield int(found.group(1)), process.stderr, token
        assert process.returncode is None, "the server ended"
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


serve_connection = functools.partial(tcp._serve_connection, token="the-token")


async def connect(port: int) -> JsonRpcPeer:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    return JsonRpcPeer(reader, writer)


async def closed_unanswered(reader: asyncio.StreamReader) -> None:
    """The server closed the connection without a word (a reset when our bytes went unread)."""
    with suppress(ConnectionResetError):
        assert await asyncio.wait_for(reader.read(), 30) == b""


def reads_who(body: dict[str, Any]) -> Any:
    """A model that reads who.txt, then says what it read: each task's answer names the
    workspace it ran in, whatever order the two sessions' requests arrive in."""
    told = results(body["messages"])
    if told:
        return reply(text("read: " + told[0]["content"]))
    return reply(tool_use("read_file", {"path": "who.txt"}))


async def test_the_server_answers_initialize_with_its_commands(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    async with tcp_server(tmp_path, fake.url) as (port, _, _):
        peer = await connect(port)
        answer = await peer.request("initialize", {"capabilities": {}, "processId": None})
        peer.writer.close()
    assert answer["serverInfo"] == {"name": "agentls", "version": __version__}
    assert set(answer["capabilities"]["executeCommandProvider"]["commands"]) == {
        "agent.runTask",
        "agent.cancel",
        "agent.newSession",
        "agent.compact",
        "agent.checkpoints",
        "agent.undo",
        "agent.sessions",
        "agent.resumeSession",
        "agent.steer",
        "agent.chat",
        "agent.model",
        "agent.setMode",
        "agent.mcpServers",
        "agent.commands",
        "agent.runInBackground",
        "agent.backgroundTasks",
        "agent.reviewBackgroundTask",
        "agent.cancelBackgroundTask",
        "agent.discardBackgroundTask",
        "agent.backgroundTaskLog",
    }
    # Asking for saves makes Neovim send its held-back didChange with each save.
    assert answer["capabilities"]["textDocumentSync"]["save"] is True


async def test_each_connection_is_its_own_session_and_probes_do_not_end_it(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    roots = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "who.txt").write_text(f"{name}\n")
        roots.append(tmp_path / name)
    fake.script(*[reads_who] * 4)
    async with tcp_server(tmp_path, fake.url) as (port, _, token):
        # A port scanner's connect-and-close, and a web page's request to localhost.
        _, probe = await asyncio.open_connection("127.0.0.1", port)
        probe.close()
        reader, browser = await asyncio.open_connection("127.0.0.1", port)
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
        browser.write(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        await closed_unanswered(reader)

        first, second = await connect(port), await connect(port)
        await first.initialize(roots[0], settings={"token": token})
        await second.initialize(roots[1], settings={"token": token})
        tasks = [
            peer.send_request(
                "workspace/executeCommand",
                {"command": "agent.runTask", "arguments": [{"task": "who is it?"}]},
            )
            for peer in (first, second)
        ]
        answers = await asyncio.gather(
            first.wait_for(answer_to=tasks[0]), second.wait_for(answer_to=tasks[1])
        )
        assert [a["result"]["summary"] for a in answers] == [
            "read: 1\tfirst",
            "read: 1\tsecond",
        ]

        # One client leaving ends its connection, not the server nor the other session.
        await second.request("shutdown", None)
        second.notify("exit", None)
        assert await asyncio.wait_for(second.reader.read(), 30) == b""
        assert await first.request(
            "workspace/executeCommand", {"command": "agent.newSession", "arguments": []}
        ) == {"ok": True}
        first.writer.close()


async def test_a_connection_from_another_user_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check on the peer's user; the table lookup itself is tested on a real socket."""
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    accepted, _ = listener.accept()
    with listener, client, accepted:
        assert tcp.peer_uid(accepted) == os.getuid()

    monkeypatch.setattr(tcp, "peer_uid", lambda connection: os.getuid() + 1)
    made: list[object] = []
    monkeypatch.setattr(tcp, "make_server", lambda: made.append(1))
    server = await asyncio.start_server(serve_connection, "127.0.0.1", 0)
    async with server:
        reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        writer.write(b"Content-Length: 2\r\n\r\n{}")
        await closed_unanswered(reader)
        writer.close()
    assert made == []


async def test_a_silent_connection_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tcp, "FIRST_LINE_SECONDS", 0.2)
    server = await asyncio.start_server(serve_connection, "127.0.0.1", 0)
    async with server:
        reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
        await closed_unanswered(reader)
        writer.close()


async def run_task(peer: JsonRpcPeer) -> dict[str, Any]:
    request = peer.send_request(
        "workspace/executeCommand", {"command": "agent.runTask", "arguments": [{"task": "go"}]}
    )
    answer: dict[str, Any] = await peer.wait_for(answer_to=request)
    return answer


@pytest.mark.parametrize("shown", [None, "a guess", "token in configuration"])
async def test_a_connection_without_the_token_runs_nothing(
    fake: FakeAnthropic, tmp_path: Path, shown: str | None
) -> None:
    """A sandboxed command with sandboxNetwork shares the loopback: the port alone is no
    proof of being the user's editor."""
    (tmp_path / "ws").mkdir()
    fake.script(reply(text("ran")))
    async with tcp_server(tmp_path, fake.url) as (port, _, token):
        peer = await connect(port)
        if shown == "token in configuration":
            # eglot over TCP sends no initializationOptions: the token comes when asked.
            peer.configuration = {"agentls": {"token": token}}
            await peer.initialize(
                tmp_path / "ws", capabilities={"workspace": {"configuration": True}}
            )
            assert (await run_task(peer))["result"]["status"] == "done"
            return
        await peer.initialize(tmp_path / "ws", settings={"token": shown} if shown else {})
        with suppress(ConnectionError, asyncio.IncompleteReadError, EOFError):
            answer = await run_task(peer)
            assert "did not show the token" in answer["error"]["message"]
        try:
            rest = await asyncio.wait_for(peer.reader.read(), 30)
        except ConnectionResetError:  # closed with our bytes unread: a reset is a close too
            rest = b""
        assert rest == b""
    assert fake.requests == []


async def test_a_tcp_client_cannot_set_user_only_settings(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    """They come from the user's settings file: a client's "always", "off" and endpoint are
    ignored, and said to be."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "config" / "agentls").mkdir(parents=True)
    (tmp_path / "config" / "agentls" / "settings.json").write_text(
        json.dumps({"approveCommands": "always", "maxSteps": 3})
    )
    with socket.create_server(("127.0.0.1", 0)) as attacker:
        chosen = {
            "sandbox": "off",
            "approveCommands": "ask",
            "baseUrl": f"http://127.0.0.1:{attacker.getsockname()[1]}",
            "allowedCommands": ["touch"],
        }
        fake.script(reply(tool_use("bash", {"command": "touch ran"})), reply(text("ok")))
        async with tcp_server(tmp_path, fake.url) as (port, _, token):
            peer = await connect(port)
            await peer.initialize(tmp_path / "ws", settings={**chosen, "token": token})
            answer = await run_task(peer)
        assert answer["result"]["status"] == "done"
        assert len(fake.requests) == 2  # the key went where the user's settings send it
        assert (tmp_path / "ws" / "ran").exists()  # unasked, as the user's file says
        shown = [
            m["params"]["message"] for m in peer.received if m.get("method") == "window/showMessage"
        ]
        assert any(
            "agentls.allowedCommands, agentls.approveCommands, agentls.baseUrl, agentls.sandbox"
            " from this client ignored" in message
            for message in shown
        ), shown
