"""The editor goes away mid-task: the server process exits, and no shell process outlives it.

Real processes throughout: the server on stdio pipes, bash with a `sleep` in the background
of its process group, and the fake API.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from doubles import is_running
from fake_api import FakeAnthropic, reply, tool_use
from lsp_pipe import ServerPipe

EXIT_WITHIN = 5.0
"""Seconds the server and its shell processes get to be gone; they take well under one."""

# A child of bash in bash's group, and bash itself waiting for it: both must die.
LONG_BASH = {"command": "sleep 300 & echo $! $$ > pids.tmp; mv pids.tmp pids; wait"}
# A job left running in the background after its step, as `server &` would be.
BACKGROUND_JOB = {"command": "sleep 300 > /dev/null 2>&1 & echo $! > pids"}


async def _pids(root: Path) -> list[int]:
    deadline = time.monotonic() + 60  # start-up, slow on a loaded machine
    while not (root / "pids").exists():
        assert time.monotonic() < deadline, "the bash step never started"
        await asyncio.sleep(0.02)
    pids = [int(line) for line in (root / "pids").read_text().split()]
    assert pids and all(map(is_running, pids))
    return pids


async def _mid_bash_step(server: ServerPipe, fake: FakeAnthropic, root: Path) -> list[int]:
    fake.script(reply(tool_use("bash", LONG_BASH)))
    server.send_request("workspace/executeCommand", _run_task())
    return await _pids(root)


async def _mid_review(server: ServerPipe, fake: FakeAnthropic, root: Path) -> list[int]:
    """A background job from an earlier step runs; an edit waits for the user's review."""
    (root / "a.py").write_text("x = 1\n")
    fake.script(
        reply(tool_use("bash", BACKGROUND_JOB)),
        reply(tool_use("edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"})),
    )
    server.send_request("workspace/executeCommand", _run_task())
    await asyncio.wait_for(server.wait_for("workspace/applyEdit"), 60)
    return await _pids(root)


def _run_task() -> dict[str, object]:
    return {"command": "agent.runTask", "arguments": [{"task": "work"}]}


MOMENTS = {"bash step": _mid_bash_step, "review": _mid_review}


async def _leave(server: ServerPipe, how: str) -> None:
    if how == "pipes closed":
        server.close_pipes()
    elif how == "exit without shutdown":
        server.notify("exit", None)
        await asyncio.sleep(0.2)  # a client that sent `exit` closes its pipes soon after
        server.close_pipes()
    elif how == "SIGTERM":
        server.process.send_signal(signal.SIGTERM)
    else:
        server.process.send_signal(signal.SIGKILL)


async def _all_gone(server: ServerPipe, pids: list[int]) -> float:
    """Seconds until the server has exited and none of `pids` runs."""
    started = time.monotonic()
    await asyncio.wait_for(server.process.wait(), EXIT_WITHIN)
    while any(map(is_running, pids)):
        assert time.monotonic() - started < EXIT_WITHIN, f"orphans: {pids}"
        await asyncio.sleep(0.02)
    return time.monotonic() - started


@pytest.mark.parametrize("how", ["pipes closed", "exit without shutdown", "SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("moment", MOMENTS)
async def test_the_server_exits_and_kills_the_shell_when_the_editor_goes(
    fake: FakeAnthropic, root: Path, moment: str, how: str
) -> None:
    server = await ServerPipe.start(root, fake.url)
    try:
        pids = await MOMENTS[moment](server, fake, root)
        await _leave(server, how)
        await _all_gone(server, pids)
    finally:
        if server.process.returncode is None:
            server.process.kill()
            await server.process.wait()
        for pid in _leftover(root):
            os.kill(pid, signal.SIGKILL)
    if moment == "review":
        assert (root / "a.py").read_text() == "x = 1\n"  # the unanswered edit never landed


def _leftover(root: Path) -> list[int]:
    path = root / "pids"
    if not path.exists():
        return []
    return [pid for pid in map(int, path.read_text().split()) if is_running(pid)]


def test_the_guardian_gets_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentls.process_groups import ProcessGroups

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-guardian-test-0123456789")
    groups = ProcessGroups()
    groups.add(4_194_305)  # above Linux's largest pid_max: no such group, nothing to kill
    guardian = groups._guardian
    assert guardian is not None
    try:
        environ = Path(f"/proc/{guardian.pid}/environ").read_bytes()
        assert b"sk-guardian-test" not in environ and environ == b""
    finally:
        groups._live.clear()
        guardian.kill()
        guardian.wait()
