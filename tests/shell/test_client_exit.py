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
from doubles import running_argv, unique_seconds
from fake_api import FakeAnthropic, reply, tool_use
from lsp_pipe import ServerPipe

EXIT_WITHIN = 30.0
"""Seconds the server and its shell processes get to be gone: well under one, but a loaded
machine may give them the CPU late; a hang still fails."""


def _long_bash(seconds: str) -> dict[str, str]:
    """A child of bash in bash's group, one in a session of its own, and bash waiting."""
    return {"command": f"sleep {seconds} & setsid sleep {seconds} & touch started; wait"}


def _background_job(seconds: str) -> dict[str, str]:
    """A job left running in the background after its step, as `server &` would be."""
    return {"command": f"sleep {seconds} > /dev/null 2>&1 & touch started"}


async def _started(root: Path, seconds: str, count: int) -> None:
    deadline = time.monotonic() + 60  # start-up, slow on a loaded machine
    while not (root / "started").exists() or len(running_argv("sleep", seconds)) < count:
        assert time.monotonic() < deadline, "the bash step never started"
        await asyncio.sleep(0.02)


async def _mid_bash_step(server: ServerPipe, fake: FakeAnthropic, root: Path, seconds: str) -> None:
    fake.script(reply(tool_use("bash", _long_bash(seconds))))
    server.send_request("workspace/executeCommand", _run_task())
    await _started(root, seconds, 2)


async def _mid_review(server: ServerPipe, fake: FakeAnthropic, root: Path, seconds: str) -> None:
    """A background job from an earlier step runs; an edit waits for the user's review."""
    (root / "a.py").write_text("x = 1\n")
    fake.script(
        reply(tool_use("bash", _background_job(seconds))),
        reply(tool_use("edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"})),
    )
    server.send_request("workspace/executeCommand", _run_task())
    await asyncio.wait_for(server.wait_for("workspace/applyEdit"), 60)
    await _started(root, seconds, 1)


def _run_task() -> dict[str, object]:
    return {"command": "agent.runTask", "arguments": [{"task": "work"}]}


MOMENTS = {
    "bash step in the sandbox": (_mid_bash_step, "auto"),
    # Without the sandbox, what left bash's group is found below bash, which still runs.
    "bash step without a sandbox": (_mid_bash_step, "off"),
    # In the sandbox a background job ends with its step; without one it lives on.
    "review, a job in the background": (_mid_review, "off"),
}


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


async def _all_gone(server: ServerPipe, seconds: str) -> float:
    """Seconds until the server has exited and no `sleep seconds` it started runs."""
    started = time.monotonic()
    await asyncio.wait_for(server.process.wait(), EXIT_WITHIN)
    while left := running_argv("sleep", seconds):
        assert time.monotonic() - started < EXIT_WITHIN, f"orphans: {left}"
        await asyncio.sleep(0.02)
    return time.monotonic() - started


@pytest.mark.parametrize("how", ["pipes closed", "exit without shutdown", "SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("moment", MOMENTS)
async def test_the_server_exits_and_kills_the_shell_when_the_editor_goes(
    fake: FakeAnthropic, root: Path, moment: str, how: str
) -> None:
    go, sandbox = MOMENTS[moment]
    seconds = unique_seconds()
    server = await ServerPipe.start(root, fake.url, {"sandbox": sandbox})
    try:
        await go(server, fake, root, seconds)
        await _leave(server, how)
        await _all_gone(server, seconds)
    finally:
        if server.process.returncode is None:
            server.process.kill()
            await server.process.wait()
        for pid in running_argv("sleep", seconds):
            os.kill(pid, signal.SIGKILL)
    if go is _mid_review:
        assert (root / "a.py").read_text() == "x = 1\n"  # the unanswered edit never landed


def test_the_guardian_gets_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentls.shell.process_groups import ProcessGroups

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
