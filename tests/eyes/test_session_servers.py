"""One set of agentls's own language servers per session (issue 42): an ACP connection's
prompts and an interactive run's tasks share the servers the first one started, and none
is left once the session ends."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from acp_wire import AcpWire
from agentls.extensions.programs import Programs
from agentls.eyes.definitions import parse_servers
from agentls.eyes.session import OwnLanguageServers
from agentls.settings.assembly import Settings
from batches import environment
from eyes.test_own_servers import _running, _script, _stubborn
from fake_api import FakeAnthropic, reply, text, tool_use
from real_servers import write_settings
from terminal.test_terminal_conversation import Terminal, _env


def _two_writes(fake: FakeAnthropic) -> None:
    """Two tasks, each writing app.py once."""
    fake.script(
        reply(tool_use("write_file", {"path": "app.py", "content": "a = 1\n"})),
        reply(text("First.")),
        reply(tool_use("write_file", {"path": "app.py", "content": "a = 2\n"})),
        reply(text("Second.")),
    )


def _check_one_start(fake: FakeAnthropic, workspace: Path) -> None:
    """The second task's write was the same server's second version of app.py (a server
    started again would say `version 1`), and it started once: its pid and its child's."""
    second = json.dumps(fake.requests[3].body["messages"][-1]["content"][0]["content"])
    assert "app.py:1: error: version 2 (watchful)" in second, second
    assert len((workspace / "pids").read_text().split()) == 2


def _none_left(workspace: Path) -> None:
    """No process of the server's script 5 s after the session ended."""
    script = _script(workspace)
    deadline = time.monotonic() + 5
    while _running(script) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running(script) == []


def test_an_acp_connection_starts_its_servers_once(
    fake: FakeAnthropic, root: Path, tmp_path: Path
) -> None:
    write_settings(tmp_path / "config", {"watchful": _stubborn(root, "watchful")})
    _two_writes(fake)
    env = {**os.environ, **environment(fake, tmp_path)}
    wire = AcpWire(env, root)
    try:
        wire.initialize()
        session = wire.request("session/new", {"cwd": str(root), "mcpServers": []})["sessionId"]
        for words in ("Write app.py.", "Write it again."):
            prompt = [{"type": "text", "text": words}]
            answer = wire.request("session/prompt", {"sessionId": session, "prompt": prompt})
            assert answer["stopReason"] == "end_turn"
        _check_one_start(fake, root)
        assert _running(_script(root)) != []  # between prompts, and until the end: kept
    finally:
        wire.close()
    assert wire.process.returncode == 0
    _none_left(root)


def test_an_interactive_run_starts_its_servers_once(tmp_path: Path, fake: FakeAnthropic) -> None:
    write_settings(tmp_path / ".config", {"watchful": _stubborn(tmp_path, "watchful")})
    _two_writes(fake)
    terminal = Terminal(tmp_path, _env(tmp_path, fake), "--yes")
    try:
        terminal.expect("agentls> ")
        terminal.type("write app.py\n")
        assert "First." in terminal.expect("agentls> ")
        terminal.type("write it again\n")
        assert "Second." in terminal.expect("agentls> ")
        _check_one_start(fake, tmp_path)
        terminal.type("\x04")
        assert terminal.process.wait(timeout=30) == 0
    finally:
        terminal.close()
    _none_left(tmp_path)


async def test_a_server_approved_in_a_later_task_joins_the_session(tmp_path: Path) -> None:
    """The repository's servers are read as each task approves them: one approved in the
    session's second task is asked from then on, beside those already running."""
    (pulling,) = parse_servers({"checker": _stubborn(tmp_path, "pull")})
    (tmp_path / "app.py").write_text("bad = 1\n")

    async def read(path: Path) -> str:
        return path.read_text()

    told: list[str] = []
    own = OwnLanguageServers(tmp_path, (), Programs.of(tmp_path, Settings()), read, told.append)
    try:
        assert await own.problems_now(tmp_path / "app.py") == ([], [])  # none approved yet
        own.next_task(read, told.append, lambda: [pulling])
        found, notes = await own.problems_now(tmp_path / "app.py")
        assert [(p.line, p.message, p.source) for p in found] == [(1, "`bad` here", "checker")]
        assert notes == [] and told == []
    finally:
        await own.close()
    _none_left(tmp_path)
