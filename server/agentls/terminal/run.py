"""`agentls run`: one task, or with no task a conversation, in the terminal.

In a conversation each line typed is a task in the same session, with the same diffs and
questions as a single task; Ctrl-C cancels the running task (or the line being typed), not the
conversation, and Ctrl-D leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

from ..agent.conversation import Conversation
from ..agent.task_result import TaskResult
from ..config import user_settings
from ..config.settings import Settings
from ..interfaces import ModelError
from ..models.anthropic import ClientCache
from ..permissions.modes import MODES, SessionMode, mode_of
from ..visible import visible
from ..wiring import TaskSetup, prepare_task
from .adapters import Answers, ShowingShell, TerminalApprover, TerminalProgress, TerminalWorkspace

EXIT_CODES = {"done": 0, "failed": 1, "step_limit": 2, "cancelled": 130}

PROMPT = "agentls> "
_WELCOME = (
    "agentls in {root}: each line is a task in one conversation. "
    "Ctrl-C cancels a task, Ctrl-D leaves; /mode [MODE] shows or switches the mode.\n"
)

T = TypeVar("T")


class TerminalSession:
    """The terminal's tasks in one conversation, each stoppable with Ctrl-C."""

    def __init__(
        self, setup: TaskSetup, root: Path, yes: bool, stream: TextIO, session: Conversation
    ) -> None:
        self.setup = setup
        self.root = root
        self.yes = yes
        self.stream = stream
        self.session = session
        self.answers = Answers(sys.stdin.fileno() if sys.stdin else None)
        self.progress = TerminalProgress(stream)
        setup.shell = ShowingShell(setup.shell, self.progress)
        self._current: asyncio.Future[Any] | None = None
        self._interrupted = False
        self.mode = SessionMode(setup.settings.mode)

    def interrupt(self) -> None:
        """Ctrl-C: stop what runs now (a task, or the wait for a line), nothing more."""
        if self._current is not None and not self._current.done():
            self._interrupted = True
            self._current.cancel()

    async def _stoppable(self, work: Awaitable[T]) -> T:
        job = asyncio.ensure_future(work)
        self._current = job
        self._interrupted = False
        try:
            return await job
        finally:
            self._current = None

    async def task(self, text: str) -> TaskResult:
        agent = self.setup.agent(
            TerminalWorkspace(self.root, self.yes, self.stream, self.answers),
            TerminalApprover(self.stream, self.answers),
            self.progress,
            self.session,
            mode=self.mode,
        )
        # The loop answers a cancel itself, with a `cancelled` result.
        result = await self._stoppable(agent.run(text))
        self.stream.write(f"\n\n{self.setup.outcome(result)}\n")
        if result.status == "failed":
            self.stream.write(f"{visible(result.summary)}\n{result.error_hint}\n")
        self.stream.flush()
        return result

    async def _next_line(self) -> str | None:
        """The next task typed, or None when the user leaves; Ctrl-C starts the line over."""
        while True:
            mode = self.mode.current
            self.stream.write(PROMPT if mode == "default" else f"agentls [{mode}]> ")
            self.stream.flush()
            try:
                line = await self._stoppable(self.answers.text())
            except asyncio.CancelledError:
                if not self._interrupted:  # the program is stopping, not the user's Ctrl-C
                    raise
                self.stream.write("\n")
                continue
            if line is None:
                self.stream.write("\n")
                return None
            if line.strip():
                return line.strip()

    async def conversation(self) -> int:
        self.stream.write(_WELCOME.format(root=self.root))
        while (line := await self._next_line()) is not None:
            if line.split()[0] == "/mode":
                self.switch_mode(line.split()[1:])
            else:
                await self.task(line)
        return 0

    def switch_mode(self, words: list[str]) -> None:
        """`/mode`: the mode now and the others; `/mode MODE`: switch (between tasks)."""
        if words:
            try:
                self.mode.current = mode_of(words[0])
            except ValueError as error:
                self.stream.write(f"agentls: {error}\n")
                return
        for mode, description in MODES.items():
            mark = "*" if mode == self.mode.current else " "
            self.stream.write(f"{mark} {mode}: {description}\n")


async def _run(
    task: str | None, settings: Settings, yes: bool, stream: TextIO, session: Conversation
) -> int:
    root = Path.cwd()
    try:
        setup = prepare_task(root, settings, ClientCache())
    except ModelError as error:
        stream.write(f"agentls: {error} {error.hint}\n")
        return EXIT_CODES["failed"]
    if setup.warning:
        stream.write(f"agentls: {setup.warning}\n")
    terminal = TerminalSession(setup, root, yes, stream, session)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, terminal.interrupt)
    try:
        if task is None:
            return await terminal.conversation()
        return EXIT_CODES[(await terminal.task(task)).status]
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        with contextlib.suppress(Exception):
            await setup.model.client.close()


def run_in_terminal(
    task: str | None,
    yes: bool,
    provider: str | None,
    model: str | None,
    max_steps: int | None,
    sandbox: Literal["auto", "required", "off"] | None,
    sandbox_network: bool | None,
    session: Conversation | None,
    mode: str | None = None,
) -> int:
    """Run `task`, or with None a conversation, in the current directory. `session` is the
    conversation to go on with (a saved one, to continue it), None for a new one. The
    settings are the user's file's (`~/.config/agentls/settings.json`), the flags given on top."""
    settings, problems = user_settings.load(
        approveCommands="always" if yes else None,
        provider=provider,
        model=model,
        maxSteps=max_steps,
        sandbox=sandbox,
        sandboxNetwork=sandbox_network,
        mode=mode,
    )
    for problem in problems:
        sys.stderr.write(f"agentls: {problem}\n")
    return asyncio.run(_run(task, settings, yes, sys.stdout, session or Conversation()))
