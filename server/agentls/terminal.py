"""`agentls run`: the same loop in a terminal. Edits are shown as diffs and written only
after `y` (or `--yes`); Ctrl-C cancels cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Literal, TextIO

from . import files
from .agent import Session, TaskResult
from .edits import unified_diff
from .interfaces import Change, Decision, Landed, ModelError, Shell, ShellResult
from .model import ClientCache
from .paths import relative
from .settings import Settings
from .visible import visible
from .wiring import prepare_task

EXIT_CODES = {"done": 0, "failed": 1, "step_limit": 2, "cancelled": 130}


class Style:
    """ANSI colours when the stream is a terminal and NO_COLOR is not set."""

    def __init__(self, stream: TextIO) -> None:
        self.on = stream.isatty() and "NO_COLOR" not in os.environ

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on else text

    def diff(self, text: str) -> str:
        colours = {"+": "32", "-": "31", "@": "36"}
        return "".join(
            self(colours[line[0]], line[:-1]) + "\n"
            if line[:1] in colours and not line.startswith(("+++", "---"))
            else line
            for line in text.splitlines(keepends=True)
        )


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Answers:
    """Lines typed on stdin, read from the descriptor without blocking the event loop, so
    Ctrl-C cancels a wait at once, and without Python's buffering, so an answer typed ahead
    is kept for the next question."""

    def __init__(self, descriptor: int | None) -> None:
        self.descriptor = descriptor
        self._pending = b""
        self._ended = False

    def _take_line(self) -> str | None:
        if b"\n" in self._pending:
            line, self._pending = self._pending.split(b"\n", 1)
        elif self._ended:
            line, self._pending = self._pending, b""
        else:
            return None
        return line.decode("utf-8", "replace").strip().lower()

    def _read(self, descriptor: int) -> None:
        data = os.read(descriptor, 4096)
        self._pending += data
        self._ended = not data

    async def line(self) -> str:
        descriptor = self.descriptor
        if descriptor is None:  # stdin closed: every question is answered no
            return ""
        loop = asyncio.get_running_loop()
        while (line := self._take_line()) is None:
            ready: asyncio.Future[None] = loop.create_future()
            try:
                loop.add_reader(descriptor, _wake, ready)
            except (OSError, ValueError):
                # A regular file (or /dev/null) cannot be polled, and never makes us wait.
                self._read(descriptor)
                continue
            try:
                await ready
            finally:
                loop.remove_reader(descriptor)
            self._read(descriptor)
        return line

    async def ask(self, question: str, stream: TextIO) -> str:
        stream.write(question)
        stream.flush()
        return await self.line()


class TerminalWorkspace:
    def __init__(self, root: Path, yes: bool, stream: TextIO, answers: Answers) -> None:
        self.root = root
        self.yes = yes
        self.stream = stream
        self.answers = answers
        self.style = Style(stream)

    async def read_text(self, path: Path) -> str:
        return files.read_text(self.root, path)

    async def propose(self, change: Change) -> Landed:
        name = relative(self.root, change.path)
        diff = unified_diff(change.old_text or "", change.new_text, name)
        self.stream.write(self.style.diff(visible(diff)))
        question = f"Apply this change to {visible(name, lines=False)}? [y/N] "
        if not self.yes and await self.answers.ask(question, self.stream) != "y":
            return Landed(False, rejected_reason="declined in the terminal")
        try:
            current = files.read_text(self.root, change.path)
        except FileNotFoundError:
            current = None
        except (OSError, files.NotText) as error:
            return Landed(False, rejected_reason=f"it cannot be read any more: {error}")
        if current != change.old_text:
            # Changed by someone else while the question waited: writing would lose that.
            return Landed(
                False, rejected_reason="the file changed on disk meanwhile; read it again"
            )
        try:
            files.write_atomic(self.root, change.path, change.new_text)
        except (OSError, ValueError) as error:
            return Landed(False, rejected_reason=f"it could not be written: {error}")
        return Landed(True, change.new_text)


class TerminalApprover:
    def __init__(self, stream: TextIO, answers: Answers) -> None:
        self.stream = stream
        self.answers = answers

    async def approve(self, command: str) -> Decision:
        question = f"Run `{visible(command)}`? [y]es / [a]ll this task / [N]o "
        answer = await self.answers.ask(question, self.stream)
        return {"y": "allow", "a": "allow_task"}.get(answer[:1], "deny")  # type: ignore[return-value]


OUTPUT_TAIL_LINES = 10
"""Lines of a command's output shown in the terminal (the model gets all of it)."""


class TerminalProgress:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.style = Style(stream)
        self.last_exit: int | None = None
        """The exit code of the command the current bash step ran, if it ran one."""

    def step(self, tool: str, summary: str) -> None:
        self.last_exit = None
        shown = visible(summary, lines=False)
        self.stream.write("\n" + self.style("1;34", f"▸ {tool}: {shown}") + "\n")
        self.stream.flush()

    def command_output(self, result: ShellResult) -> None:
        """The tail of a command's output, dimmed, under its step."""
        self.last_exit = result.exit_code
        lines = result.output.rstrip("\n").splitlines()
        if len(lines) > OUTPUT_TAIL_LINES:
            skipped = len(lines) - OUTPUT_TAIL_LINES
            lines = [f"… {skipped} more lines", *lines[-OUTPUT_TAIL_LINES:]]
        for line in lines:
            self.stream.write(self.style("2", f"    {visible(line, lines=False)}") + "\n")

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        # A command that ran and exited non-zero answered the model, but failed for the user.
        failed = not ok or self.last_exit not in (None, 0)
        mark = self.style("31", "✗") if failed else self.style("32", "✓")
        self.stream.write(f"  {mark} {visible(_for_the_user(detail), lines=False)}\n")
        self.stream.flush()

    def text(self, delta: str) -> None:
        self.stream.write(visible(delta))
        self.stream.flush()


def _for_the_user(detail: str) -> str:
    """A result's first sentence: what follows it ("Do not retry it; ask or take another
    way.") is advice written for the model."""
    sentence, stop, _ = detail.partition(". ")
    return sentence + "." if stop else detail


class ShowingShell:
    """The task's shell, with each command's output shown in the terminal."""

    def __init__(self, shell: Shell, progress: TerminalProgress) -> None:
        self.shell = shell
        self.progress = progress

    @property
    def sandboxed(self) -> bool:
        return self.shell.sandboxed

    async def run(
        self, command: str, timeout: float, output_limit: int, sandboxed: bool = True
    ) -> ShellResult:
        result = await self.shell.run(command, timeout, output_limit, sandboxed)
        self.progress.command_output(result)
        return result


def _report(result: TaskResult, outcome: str, stream: TextIO) -> None:
    stream.write(f"\n\n{outcome}\n")
    if result.status == "failed":
        stream.write(f"{visible(result.summary)}\n{result.error_hint}\n")


async def _run(task: str, settings: Settings, yes: bool, stream: TextIO) -> int:
    root = Path.cwd()
    try:
        setup = prepare_task(root, settings, ClientCache())
    except ModelError as error:
        stream.write(f"agentls: {error} {error.hint}\n")
        return EXIT_CODES["failed"]
    if setup.warning:
        stream.write(f"agentls: {setup.warning}\n")
    answers = Answers(sys.stdin.fileno() if sys.stdin else None)
    progress = TerminalProgress(stream)
    setup.shell = ShowingShell(setup.shell, progress)
    agent = setup.agent(
        TerminalWorkspace(root, yes, stream, answers),
        TerminalApprover(stream, answers),
        progress,
        Session(),
    )
    job = asyncio.ensure_future(agent.run(task))
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, job.cancel)
    try:
        result = await job
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        with contextlib.suppress(Exception):
            await setup.model.client.close()
    _report(result, setup.outcome(result), stream)
    return EXIT_CODES[result.status]


def run_in_terminal(
    task: str,
    yes: bool,
    provider: str | None,
    model: str | None,
    max_steps: int | None,
    sandbox: Literal["auto", "required", "off"] = "auto",
    sandbox_network: bool = False,
) -> int:
    settings = Settings(
        approve_commands="always" if yes else "ask",
        provider=provider,
        sandbox=sandbox,
        sandbox_network=sandbox_network,
    )
    if model:
        settings = replace(settings, model=model)
    if max_steps is not None:
        settings = replace(settings, max_steps=max_steps)
    return asyncio.run(_run(task, settings, yes, sys.stdout))
