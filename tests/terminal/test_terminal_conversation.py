"""`agentls run` with no task: a conversation in a real terminal (a pty), against the fake API."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from doubles import running_argv, unique_seconds
from fake_api import FakeAnthropic, reply, text, tool_use


class Terminal:
    """A child process on a pty of its own, as its controlling terminal: bytes typed in go
    through the line discipline, so Ctrl-C is a SIGINT and Ctrl-D an end of input."""

    def __init__(self, root: Path, env: dict[str, str], *arguments: str) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentls", "run", *arguments],
            cwd=root,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            # After setsid: the pty becomes the new session's controlling terminal.
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.seen = ""

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def expect(self, marker: str, timeout: float = 30) -> str:
        """Everything printed until `marker` (which is consumed)."""
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{marker!r} never came; the terminal shows:\n{self.seen}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    self.seen += os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    break
        before, _, self.seen = self.seen.partition(marker)
        return before

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        os.close(self.master)


@pytest.fixture
def terminal(tmp_path: Path, fake: FakeAnthropic) -> Iterator[Terminal]:
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "XDG_CONFIG_HOME": str(tmp_path / ".config"),
        "NO_COLOR": "1",
    }
    shell = Terminal(tmp_path, env)
    yield shell
    shell.close()


def test_each_line_is_a_task_in_one_conversation(
    tmp_path: Path, fake: FakeAnthropic, terminal: Terminal
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    seconds = unique_seconds()
    fake.script(
        reply(tool_use("todo_write", {"todos": [{"content": "Edit", "status": "in_progress"}]})),
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "1", "new_text": "2"})),
        reply(text("Set x to 2.")),
        reply(tool_use("bash", {"command": f"sleep {seconds}"})),
        reply(text("Here again.")),
    )
    assert "Ctrl-D leaves" in terminal.expect("agentls> ")
    terminal.type("set x to 2\n")
    shown = terminal.expect("Apply this change to app.py? [y/N] ")
    assert "Plan:\n  [>] Edit" in shown.replace("\r\n", "\n")
    assert "-x = 1\r\n+x = 2" in shown
    terminal.type("y\n")
    assert "done: 3 steps, 1 edit applied" in terminal.expect("agentls> ")
    assert (tmp_path / "app.py").read_text() == "x = 2\n"

    # Ctrl-C cancels the running task (its command killed), and the conversation goes on.
    terminal.type("wait a while\n")
    terminal.expect(f"Run `sleep {seconds}`? [y]es / [a]ll this task / [N]o ")
    terminal.type("y\n")
    while not running_argv("sleep", seconds):
        time.sleep(0.02)
    terminal.type("\x03")
    assert "cancelled: " in terminal.expect("agentls> ")
    killed_by = time.monotonic() + 2  # the sandbox's processes die as the kernel gets to it
    while running_argv("sleep", seconds):
        assert time.monotonic() < killed_by, "the cancelled command still runs"
        time.sleep(0.02)
    assert terminal.process.poll() is None

    # Ctrl-C at the prompt starts the line over.
    terminal.type("never sent\x03")
    terminal.expect("agentls> ")
    terminal.type("are you there?\n")
    assert "Here again." in terminal.expect("agentls> ")
    last = fake.requests[-1].body["messages"]
    typed = [b["text"] for m in last if m["role"] == "user" for b in m["content"] if "text" in b]
    assert typed[0] == "set x to 2" and typed[1] == "wait a while"
    assert typed[-1] == "are you there?" and "never sent" not in str(last)

    terminal.type("\x04")
    assert terminal.process.wait(timeout=10) == 0


def test_ctrl_d_at_an_empty_prompt_leaves_at_once(terminal: Terminal) -> None:
    terminal.expect("agentls> ")
    terminal.type("\x04")
    assert terminal.process.wait(timeout=10) == 0
    left = terminal.expect("\n", timeout=5)  # the line Ctrl-D ends, and no second prompt
    assert "agentls>" not in left + terminal.seen


def test_a_conversation_continues_the_last_session(tmp_path: Path, fake: FakeAnthropic) -> None:
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "XDG_CONFIG_HOME": str(tmp_path / ".config"),
        "NO_COLOR": "1",
    }
    fake.script(reply(text("First answer.")), reply(text("Second answer.")))
    first = subprocess.run(
        [sys.executable, "-m", "agentls", "run", "first task"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert first.returncode == 0, first.stderr
    terminal = Terminal(tmp_path, env, "--continue")
    try:
        terminal.expect("agentls> ")
        terminal.type("second task\n")
        assert "Second answer." in terminal.expect("agentls> ")
        terminal.type("\x04")
        assert terminal.process.wait(timeout=10) == 0
    finally:
        terminal.close()
    last = fake.requests[-1].body["messages"]
    typed = [b["text"] for m in last for b in m["content"] if "text" in b]
    assert typed == ["first task", "First answer.", "second task"]
