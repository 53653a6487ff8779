"""agentls's own eyes in every door without an editor (issue 42): an edit's result in `agentls
acp`, in a batch task and in a background task names what the user's language servers say
of it, and no server runs once the task has ended. With ruff in the fast suite; with pyright
too in the `pyright` tier (tests/eyes/setup.sh)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from acp_wire import AcpWire
from background_tasks import make_repository
from batch.test_batch import batch
from batches import environment, prompt, write_tasks
from batches import make_repository as make_batch_repository
from fake_api import FakeAnthropic, Turn, reply, text, tool_use
from real_servers import (
    CONTENT,
    PYRIGHT_SAYS,
    RUFF,
    RUFF_SAYS,
    left_after,
    pyright,
    pyright_installed,
    ruff,
    started_for,
    write_settings,
)

BLOCK = "Problems the language servers report in app.py now:"


class Servers(NamedTuple):
    setting: dict[str, object]
    """The `lspServers` setting."""
    say: list[str]
    """Lines of the result of writing `CONTENT`."""
    commands: list[str]
    """What each server's command line holds."""


@pytest.fixture(
    params=[
        pytest.param("ruff"),
        pytest.param("pyright", marks=pytest.mark.pyright),
    ]
)
def servers(request: pytest.FixtureRequest) -> Servers:
    if not RUFF.exists():
        pytest.skip("ruff is in the test extras")
    if request.param == "ruff":
        return Servers({"ruff": ruff()}, [RUFF_SAYS], ["ruff server"])
    pyright_installed()
    return Servers(
        {"ruff": ruff(), "pyright": pyright()},
        [RUFF_SAYS, f"{PYRIGHT_SAYS} (Pyright)"],
        ["ruff server", "pyright-langserver --stdio"],
    )


Running = dict[int, tuple[str, dict[str, str]]]


def _script_the_write(fake: FakeAnthropic, words: str, folder: Path) -> Running:
    """The task writes app.py, then ends; what runs for a workspace in `folder` while the
    model is asked again (the servers the write started) is kept in the dict returned."""
    running: Running = {}

    def done(body: Any) -> Turn:
        running.update(started_for(folder))
        return reply(text("Written."))

    write = tool_use("write_file", {"path": "app.py", "content": CONTENT})
    fake.script_for(words, reply(write), done)
    return running


def _seen_by_the_model(fake: FakeAnthropic) -> list[str]:
    """The write's result, as the model's next request carried it."""
    (answered,) = [r for r in fake.requests if len(r.body["messages"]) == 3]
    content = answered.body["messages"][-1]["content"][0]["content"]
    lines: list[str] = (content if isinstance(content, str) else json.dumps(content)).splitlines()
    return lines


def _check(fake: FakeAnthropic, servers: Servers, running: Running, folder: Path) -> None:
    lines = _seen_by_the_model(fake)
    assert lines[1] == BLOCK, lines
    assert set(servers.say) <= set(lines[2:]), lines
    commands = " | ".join(command for command, _ in running.values())
    assert all(command in commands for command in servers.commands), commands
    for command, env in running.values():
        assert "ANTHROPIC_API_KEY" not in env and "test-key" not in env.values(), command


def test_acp(servers: Servers, fake: FakeAnthropic, root: Path, tmp_path: Path) -> None:
    write_settings(tmp_path / "config", servers.setting)
    running = _script_the_write(fake, "Write app.py.", tmp_path)
    env = {**os.environ, **environment(fake, tmp_path)}
    wire = AcpWire(env, root)
    try:
        wire.initialize()
        new = wire.request("session/new", {"cwd": str(root), "mcpServers": []})
        words = [{"type": "text", "text": "Write app.py."}]
        answer = wire.request("session/prompt", {"sessionId": new["sessionId"], "prompt": words})
        assert answer["stopReason"] == "end_turn"
        _check(fake, servers, running, tmp_path)
    finally:
        wire.close()
    assert left_after(tmp_path) == []  # the connection's servers stopped with it


def test_a_batch_task(
    servers: Servers, fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_batch_repository(tmp_path / "repo")
    for name, value in environment(fake, tmp_path).items():
        monkeypatch.setenv(name, value)
    write_settings(tmp_path / "config", servers.setting)
    write_tasks(tmp_path / "tasks.jsonl", ["eyes"])
    running = _script_the_write(fake, prompt("eyes"), tmp_path)
    status, err = batch(tmp_path, "--workers", "1")
    assert status == 0, err
    _check(fake, servers, running, tmp_path)
    assert left_after(tmp_path) == []  # each server stopped with its task


def test_a_background_task(
    servers: Servers, fake: FakeAnthropic, root: Path, tmp_path: Path
) -> None:
    make_repository(root, {"app.py": "x = 0\n"})
    write_settings(tmp_path / "config", servers.setting)
    running = _script_the_write(fake, "Write app.py.", tmp_path)
    env = {**os.environ, **environment(fake, tmp_path)}

    def agentls(*arguments: str) -> str:
        command = [sys.executable, "-m", "agentls", *arguments]
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    agentls("run", "--background", "Write app.py.")
    deadline = time.monotonic() + 60
    while "done" not in (table := agentls("tasks")):
        assert time.monotonic() < deadline, table
        time.sleep(0.3)
    _check(fake, servers, running, tmp_path)
    assert left_after(tmp_path) == []  # each server stopped with its task
