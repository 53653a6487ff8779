"""The terminal's adapters for the loop: edits shown as diffs and written only after `y` (or
`--yes`), commands asked, progress printed, answers read from stdin."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TextIO

from ..disk import files
from ..disk.landing import land_on_disk
from ..disk.paths import relative
from ..edits import unified_diff
from ..interfaces import Change, Decision, Landed, PlanItem, Shell, ShellResult
from ..visible import visible


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
        elif self._ended and self._pending:
            line, self._pending = self._pending, b""
        else:
            return None
        return line.decode("utf-8", "replace")

    def _read(self, descriptor: int) -> None:
        data = os.read(descriptor, 4096)
        self._pending += data
        self._ended = not data

    async def text(self) -> str | None:
        """The next line as typed, or None when the input has ended (Ctrl-D, stdin closed)."""
        descriptor = self.descriptor
        if descriptor is None:
            return None
        loop = asyncio.get_running_loop()
        while (line := self._take_line()) is None:
            if self._ended:  # Ctrl-D on an empty line: no line, not an empty one
                return None
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

    async def line(self) -> str:
        """An answer: the line stripped and lower-case; "" (no) when the input has ended."""
        return ((await self.text()) or "").strip().lower()

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

    def open_documents(self) -> dict[Path, str]:
        return {}

    async def propose(self, change: Change) -> Landed:
        name = relative(self.root, change.path)
        diff = unified_diff(change.old_text or "", change.new_text, name)
        self.stream.write(self.style.diff(visible(diff)))
        question = f"Apply this change to {visible(name, lines=False)}? [y/N] "
        if (
            change.reviewed
            and not self.yes
            and await self.answers.ask(question, self.stream) != "y"
        ):
            return Landed(False, rejected_reason="declined in the terminal")
        return land_on_disk(self.root, change)


class TerminalApprover:
    def __init__(self, stream: TextIO, answers: Answers) -> None:
        self.stream = stream
        self.answers = answers

    async def approve(self, command: str, unsandboxed: bool = False) -> Decision:
        where = " outside the sandbox" if unsandboxed else ""
        question = f"Run `{visible(command)}`{where}? [y]es / [a]ll this task / [N]o "
        answer = await self.answers.ask(question, self.stream)
        return {"y": "allow", "a": "allow_task"}.get(answer[:1], "deny")  # type: ignore[return-value]

    async def approve_project(self, what: str) -> bool:
        question = f"The project asks to {visible(what)}. Allow (remembered)? [y/N] "
        return (await self.answers.ask(question, self.stream))[:1] == "y"

    async def approve_plan(self, plan: str) -> bool:
        self.stream.write(f"\nThe plan:\n{visible(plan)}\n")
        answer = await self.answers.ask("Carry out this plan? [y/N] ", self.stream)
        return answer[:1] == "y"


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
        shown = f"{tool}: {visible(summary, lines=False)}" if summary else tool
        self.stream.write("\n" + self.style("1;34", f"▸ {shown}") + "\n")
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
        self.stream.write(f"  {mark} {visible(detail, lines=False)}\n")
        self.stream.flush()

    def text(self, delta: str) -> None:
        self.stream.write(visible(delta))
        self.stream.flush()

    def plan(self, items: list[PlanItem]) -> None:
        boxes = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
        lines = [f"  {boxes[item.status]} {visible(item.content, lines=False)}" for item in items]
        self.stream.write("\n" + self.style("1", "Plan:") + "\n" + "\n".join(lines) + "\n")
        self.stream.flush()

    def steered(self, text: str) -> None:
        added = f"+ added to the task: {visible(text, lines=False)}"
        self.stream.write("\n" + self.style("1;35", added) + "\n")
        self.stream.flush()


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
