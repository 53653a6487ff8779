"""`agentls run` with no task: a conversation in a real terminal (a pty), against the fake API."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from doubles import running_argv, unique_seconds
from fake_api import FakeAnthropic, reply, text, tool_use

_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]")
"""The terminal's escape sequences (colours, cursor moves), which `seen` leaves out."""


class Terminal:
    """A child process on a pty of its own, as its controlling terminal: bytes typed in go
    through the line discipline, so Ctrl-C is a SIGINT and Ctrl-D an end of input. It answers
    the prompt's question of where the cursor is, as a terminal does."""

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
        self.env = env
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
                    shown = os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    break
                if "\x1b[6n" in shown:
                    self.type("\x1b[1;1R")
                self.seen += _CONTROL.sub("", shown)
        before, _, self.seen = self.seen.partition(marker)
        return before

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=60)
        os.close(self.master)


def _env(tmp_path: Path, fake: FakeAnthropic, term: str = "dumb") -> dict[str, str]:
    """A dumb terminal by default (as Emacs's shell is): lines are read plainly and nothing
    moves, so the tests can wait for `agentls> `; `xterm` for the prompt and what moves."""
    return {
        **os.environ,
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "XDG_CONFIG_HOME": str(tmp_path / ".config"),
        "NO_COLOR": "1",
        "TERM": term,
    }


@pytest.fixture
def terminal(tmp_path: Path, fake: FakeAnthropic) -> Iterator[Terminal]:
    shell = Terminal(tmp_path, _env(tmp_path, fake))
    yield shell
    shell.close()


@pytest.fixture
def xterm(tmp_path: Path, fake: FakeAnthropic) -> Iterator[Terminal]:
    shell = Terminal(tmp_path, _env(tmp_path, fake, "xterm-256color"))
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
    assert "done · 3 steps · 1 edit" in terminal.expect("agentls> ")
    assert (tmp_path / "app.py").read_text() == "x = 2\n"

    # Ctrl-C cancels the running task (its command killed), and the conversation goes on.
    terminal.type("wait a while\n")
    terminal.expect(f"Run `sleep {seconds}`? [y]es / [a]ll this task / [N]o ")
    terminal.type("y\n")
    while not running_argv("sleep", seconds):
        time.sleep(0.02)
    terminal.type("\x03")
    assert "cancelled · " in terminal.expect("agentls> ")
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
    assert terminal.process.wait(timeout=60) == 0


def test_ctrl_d_at_an_empty_prompt_leaves_at_once(terminal: Terminal) -> None:
    terminal.expect("agentls> ")
    terminal.type("\x04")
    assert terminal.process.wait(timeout=60) == 0
    left = terminal.expect("\n", timeout=30)  # the line Ctrl-D ends, and no second prompt
    assert "agentls>" not in left + terminal.seen


def test_a_conversation_continues_the_last_session(tmp_path: Path, fake: FakeAnthropic) -> None:
    env = _env(tmp_path, fake)
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
        assert terminal.process.wait(timeout=60) == 0
    finally:
        terminal.close()
    last = fake.requests[-1].body["messages"]
    typed = [b["text"] for m in last for b in m["content"] if "text" in b]
    assert typed == ["first task", "First answer.", "second task"]


def test_a_commands_output_shows_as_it_runs_and_a_cancel_keeps_it(
    tmp_path: Path, fake: FakeAnthropic, xterm: Terminal
) -> None:
    loop = "for i in 1 2 3 4 5; do echo tick $i; sleep 1; done; touch finished"
    fake.script(reply(tool_use("bash", {"command": loop})), reply(text("Counted.")))
    xterm.expect("Ctrl-D leaves.")
    xterm.type("count\r")
    xterm.expect("[N]o ")
    xterm.type("y\n")
    xterm.expect("tick 1")
    assert not (tmp_path / "finished").exists()  # shown while the command runs
    xterm.expect("tick 2")
    xterm.type("\x03")
    assert "Traceback" not in xterm.expect("cancelled")
    xterm.type("go on\r")
    xterm.expect("Counted.")
    result = fake.requests[-1].body["messages"][2]["content"][0]
    assert result["is_error"] and "Cancelled by the user while it ran" in result["content"]
    assert "tick 1\ntick 2" in result["content"]  # the model gets what it printed
    assert not (tmp_path / "finished").exists()


def test_up_recalls_the_last_task_across_sessions(
    tmp_path: Path, fake: FakeAnthropic, xterm: Terminal
) -> None:
    fake.script(reply(text("One.")), reply(text("Two.")))
    xterm.expect("Ctrl-D leaves.")
    xterm.type("the first task\r")
    xterm.expect("done")
    xterm.expect("agentls>")  # drawn once the prompt reads keys (Ctrl-D is one then)
    xterm.type("\x04")
    assert xterm.process.wait(timeout=60) == 0
    again = Terminal(tmp_path, xterm.env)
    try:
        again.expect("Ctrl-D leaves.")
        again.type("\x1b[A")  # Up: the history is kept in the state folder
        again.expect("the first task")
        again.type("\r")
        again.expect("Two.")
    finally:
        again.close()
    typed = [b["text"] for m in fake.requests[-1].body["messages"] for b in m["content"]]
    assert typed[-1] == "the first task"


def test_ctrl_c_as_a_task_starts_exits_130_without_a_traceback(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("never seen"), delay=5))
    started = time.monotonic()
    shell = Terminal(tmp_path, _env(tmp_path, fake, "xterm-256color"), "a task")
    try:
        time.sleep(max(0.0, 0.4 - (time.monotonic() - started)))
        shell.type("\x03")
        # 130 from agentls; or, on a machine so loaded that Python had not yet taken over
        # SIGINT, death by the signal itself, which a shell reports as 130 too.
        assert shell.process.wait(timeout=60) in (130, -signal.SIGINT)
        shown = shell.expect("\n", timeout=30) + shell.seen
        assert "Traceback" not in shown and "Error" not in shown, shown
    finally:
        shell.close()


_INTERRUPTIBLE = """
import dataclasses, importlib.abc, os, sys, time

# Where a Ctrl-C at start-up went wrong: a KeyboardInterrupt inside a class body's
# `__set_name__` (a dataclass field) is a RuntimeError in Python 3.11. Slowed down, so that a
# Ctrl-C while agentls loads lands in one as often as not, where it did now and then.
_set_name = dataclasses.Field.__set_name__

def _slow(self, owner, name):
    time.sleep(0.03)
    return _set_name(self, owner, name)

dataclasses.Field.__set_name__ = _slow

class Started(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "agentls":  # Python's own start-up is over: agentls's begins
            sys.meta_path.remove(self)
            os.write(2, b"<agentls starts>")
        return None

sys.meta_path.insert(0, Started())
"""


def _interrupted_at(tmp_path: Path, fake: FakeAnthropic, delay: float) -> tuple[int, str]:
    """`agentls run TASK` sent Ctrl-C `delay` seconds after agentls began to load: its exit
    status and all it printed."""
    root = tmp_path / f"at-{delay}"
    (root / "python").mkdir(parents=True)
    (root / "python" / "sitecustomize.py").write_text(_INTERRUPTIBLE)
    env = {**_env(root, fake, "xterm-256color"), "PYTHONPATH": str(root / "python")}
    shell = Terminal(root, env, "a task")
    try:
        shell.expect("<agentls starts>")
        time.sleep(delay)
        shell.type("\x03")
        shown = shell.expect("<the terminal closes>", timeout=60)  # all it prints
        return shell.process.wait(timeout=60), shown
    finally:
        shell.close()


def test_ctrl_c_at_any_moment_of_the_start_exits_130_without_a_traceback(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """Issue 38: Ctrl-C while `agentls run` still imported printed `RuntimeError: Error
    calling __set_name__ ... 'Subagents'` and exited 1. Several moments, at once."""
    fake.script(*[reply(text("never seen"), delay=5) for _ in range(6)])
    delays = (0.05, 0.1, 0.2, 0.3, 0.45, 0.6)
    with ThreadPoolExecutor(len(delays)) as pool:
        ends = list(pool.map(lambda delay: _interrupted_at(tmp_path, fake, delay), delays))
    for delay, (status, shown) in zip(delays, ends, strict=True):
        assert (status, "Traceback" in shown) == (130, False), f"at {delay} s:\n{shown}"
    assert fake.requests == []  # no task began


def test_two_questions_of_one_turn_are_put_one_at_a_time(
    tmp_path: Path, fake: FakeAnthropic, terminal: Terminal
) -> None:
    """L2: two read-only calls of one turn, both asked (an ask rule on Read), printed two
    questions on one line, and the run hung after both answers."""
    (tmp_path / "a.txt").write_text("A\n")
    (tmp_path / "b.txt").write_text("B\n")
    (tmp_path / ".config" / "agentls").mkdir(parents=True)
    (tmp_path / ".config" / "agentls" / "settings.json").write_text(
        '{"permissions": {"ask": ["Read"]}}'
    )
    fake.script(
        reply(
            tool_use("read_file", {"path": "a.txt"}),
            tool_use("read_file", {"path": "b.txt"}),
        ),
        reply(text("Read both.")),
    )
    terminal.expect("agentls> ")
    terminal.type("read them\n")
    terminal.expect("Run `read_file a.txt`? [y]es / [a]ll this task / [N]o ")
    terminal.type("y\n")
    # The second question comes once the first is answered, on a line of its own.
    before = terminal.expect("Run `read_file b.txt`? [y]es / [a]ll this task / [N]o ")
    assert "y\r\n" in before
    terminal.type("y\n")
    assert "Read both." in terminal.expect("agentls> ", timeout=20)
    told = [b for m in fake.requests[-1].body["messages"] for b in m["content"] if "content" in b]
    assert [b.get("is_error", False) for b in told if b["type"] == "tool_result"] == [False] * 2
    terminal.type("\x04")
    assert terminal.process.wait(timeout=60) == 0


_SLOW_SDK = """
import importlib.abc, sys, time

class SlowSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "anthropic":
            time.sleep(float({seconds!r}))
        return None

sys.meta_path.insert(0, SlowSdk())
"""


def test_the_prompt_comes_before_the_sdk_is_loaded(tmp_path: Path, fake: FakeAnthropic) -> None:
    """The model's SDK takes seconds to import on a loaded machine: the first prompt is
    drawn before it, and the line typed meanwhile runs once it is there."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(_SLOW_SDK.format(seconds=6))
    env = {**_env(tmp_path, fake, "xterm-256color"), "PYTHONPATH": str(slow)}
    fake.script(reply(text("Hello there.")))
    shell = Terminal(tmp_path, env)
    try:
        started = time.monotonic()
        shell.expect("agentls>")
        assert time.monotonic() - started < 5, "the prompt waited for the SDK"
        shell.type("say hello\r")
        shell.expect("Hello there.")
        assert time.monotonic() - started > 6  # it did wait for the SDK, then
        shell.expect("agentls>")
        shell.type("\x04")
        assert shell.process.wait(timeout=60) == 0
    finally:
        shell.close()


def test_no_key_ends_the_first_prompt_with_the_reason(tmp_path: Path, fake: FakeAnthropic) -> None:
    # Not on loopback, where a local server wants no key.
    hosted = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "https://api.anthropic.invalid"}
    env = {**_env(tmp_path, fake, "xterm-256color"), **hosted}
    shell = Terminal(tmp_path, env)
    try:
        shell.expect("agentls>")
        shell.expect("agentls: No Anthropic API key")  # at once, not after a first line
        assert shell.process.wait(timeout=60) == 1
    finally:
        shell.close()


def _project_skill(root: Path) -> None:
    folder = root / ".agents" / "skills" / "changelog"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: changelog\ndescription: Write the changelog entry\n---\nList the commits.\n"
    )


def test_a_project_skill_waiting_is_listed_and_its_name_offers_the_approval(
    tmp_path: Path, fake: FakeAnthropic, terminal: Terminal
) -> None:
    """Issue 40, row 3: not "No command /changelog", nor left out of /help."""
    _project_skill(tmp_path)
    fake.script(reply(text("Changelog written.")))
    terminal.expect("agentls> ")
    terminal.type("/help\n")
    listed = terminal.expect("agentls> ")
    assert re.search(r"/changelog\s+\[waiting for your approval: type it to be asked\]", listed)
    assert "Write the changelog entry" in listed
    terminal.type("/changelog\n")
    asked = terminal.expect("(remembered)? [y/N] ")
    assert "No command" not in asked
    assert "/changelog is the project's own, not approved yet" in asked
    assert "skills changelog" in asked
    terminal.type("n\n")
    refused = terminal.expect("agentls> ")
    assert "Not approved: /changelog does not run" in refused
    assert "agentls skills approve" in refused
    assert not fake.requests
    terminal.type("/changelog v2\n")
    terminal.expect("(remembered)? [y/N] ")
    terminal.type("y\n")
    assert "Changelog written." in terminal.expect("agentls> ")
    (request,) = fake.requests
    sent = json.dumps(request.body["messages"])
    assert 'skill_content name=\\"changelog\\"' in sent and "ARGUMENTS: v2" in sent
    terminal.type("/help\n")
    listed = terminal.expect("agentls> ")
    assert "waiting" not in listed and "/changelog" in listed
