"""`agentls run`: one task, or with no task a conversation, in the terminal; with `-p`, one
task for a script (`headless.py`).

In a conversation each line typed is a task in the same session, with the same diffs and
questions as a single task, or a slash command (`slash.py`); Ctrl-C cancels the running task
(or the line being typed), not the conversation, and Ctrl-D leaves. Ctrl-C at any other
moment (starting up, before the task's first request) ends the run as cancelled, exit 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

from ..agent.conversation import Conversation
from ..agent.task_json import task_json
from ..agent.task_result import CANCELLED_BY_USER, TaskResult
from ..config import user_settings
from ..config.settings import Settings
from ..interfaces import ModelError
from ..models.anthropic import ClientCache
from ..permissions.modes import MODES, SessionMode, mode_of
from ..visible import visible
from ..wiring import TaskSetup, prepare_task
from .adapters import TerminalApprover, TerminalMcpUser, TerminalWorkspace
from .answers import Answers
from .headless import (
    Events,
    HeadlessApprover,
    HeadlessMcpUser,
    HeadlessProgress,
    HeadlessWorkspace,
    OutputFormat,
)
from .prompt import PROMPT, Prompt
from .screen import Screen
from .slash import run_command

EXIT_CODES = {"done": 0, "failed": 1, "step_limit": 2, "cancelled": 130}

_WELCOME = (
    "agentls in {root}: each line is a task in one conversation; /help lists the commands. "
    "Ctrl-C cancels a task, Ctrl-D leaves."
)

T = TypeVar("T")


@dataclass
class RunOptions:
    """What `agentls run` was asked besides the task."""

    yes: bool = False
    output_format: OutputFormat | None = None
    """None: a person at a terminal; else `-p`, for a script."""
    resumed: str = ""
    """The conversation gone on with, in words ("" for a new one)."""


class TerminalSession:
    """The terminal's tasks in one conversation, each stoppable with Ctrl-C."""

    def __init__(
        self,
        setup: TaskSetup,
        root: Path,
        options: RunOptions,
        stream: TextIO,
        session: Conversation,
        clients: ClientCache,
    ) -> None:
        self.setup = setup
        self.root = root
        self.options = options
        self.stream = stream
        self.session = session
        self.clients = clients
        self.answers = Answers(sys.stdin.fileno() if sys.stdin else None)
        self.screen = Screen(stream)
        self.events = Events(stream, options.output_format == "stream-json")
        self._current: asyncio.Future[Any] | None = None
        self._interrupted = False
        self.mode = SessionMode(setup.settings.mode)
        self.stopped = False
        """Ctrl-C came while nothing could be cancelled (starting up): the run ends."""

    def interrupt(self) -> None:
        """Ctrl-C: stop what runs now (a task, or the wait for a line), nothing more."""
        if self._current is not None and not self._current.done():
            self._interrupted = True
            self._current.cancel()
        else:
            self.stopped = True

    async def _stoppable(self, work: Awaitable[T]) -> T:
        job = asyncio.ensure_future(work)
        self._current = job
        self._interrupted = False
        try:
            return await job
        finally:
            self._current = None

    def agent(self) -> Any:
        if self.options.output_format is not None:
            yes = self.options.yes
            workspace: Any = HeadlessWorkspace(self.root, yes, self.events)
            approver: Any = HeadlessApprover()
            progress: Any = HeadlessProgress(self.events)
            user: Any = HeadlessMcpUser()
        else:
            workspace = TerminalWorkspace(self.root, self.options.yes, self.screen, self.answers)
            approver = TerminalApprover(self.screen, self.answers)
            progress = self.screen
            user = TerminalMcpUser(self.screen, self.answers)
        return self.setup.agent(
            workspace, approver, progress, self.session, mode=self.mode, mcp_user=user
        )

    async def task(self, text: str) -> TaskResult:
        agent = self.agent()
        if self.stopped:  # Ctrl-C while starting: the task is not begun
            result = TaskResult("cancelled", CANCELLED_BY_USER)
        else:
            if self.options.output_format is None:
                self.screen.thinking()
            try:
                # The loop answers a cancel itself, with a `cancelled` result.
                result = await self._stoppable(agent.run(text))
            except asyncio.CancelledError:
                if not self._interrupted:  # the program is stopping, not the user's Ctrl-C
                    raise
                # Ctrl-C before the task's first step: the loop never saw it.
                result = TaskResult("cancelled", CANCELLED_BY_USER)
        self.report(result)
        return result

    def report(self, result: TaskResult) -> None:
        """How the task ended, in the run's output format."""
        outcome = self.setup.outcome(result)
        output_format = self.options.output_format
        if output_format is None:
            self.screen.finish()
            if result.status == "failed":  # what went wrong first, then what it cost
                self.screen.say(f"\n{visible(result.summary)}\n{result.error_hint}", "red")
            style = "green" if result.status == "done" else "yellow"
            self.screen.say(f"\n{outcome}", "bold " + style)
            return
        answer = task_json(result, outcome, self.setup.model.name, self.setup.price)
        answer["session"] = self.session.id
        if output_format == "stream-json":
            self.events.send("usage", **answer["usage"])
            self.events.send("outcome", **answer)
        elif output_format == "json":
            self.stream.write(json.dumps(answer, ensure_ascii=False) + "\n")
        else:
            self.stream.write(result.summary.rstrip("\n") + "\n")
            sys.stderr.write(outcome + "\n")
            if result.status == "failed" and result.error_hint:
                sys.stderr.write(result.error_hint + "\n")
        self.stream.flush()

    async def _next_line(self, prompt: Prompt | None) -> str | None:
        """The next task typed, or None when the user leaves; Ctrl-C starts the line over."""
        while True:
            if prompt is not None:
                try:
                    line = await prompt.line()
                except KeyboardInterrupt:
                    continue
            else:
                self.stream.write(PROMPT)
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
        self.screen.say(_WELCOME.format(root=self.root))
        if self.options.resumed:
            self.screen.say(self.options.resumed)
        # A real prompt where someone types; lines read plainly from a pipe, or from a dumb
        # terminal (Emacs's shell edits the line itself, and sends it whole).
        typing = sys.stdin is not None and sys.stdin.isatty() and self.screen.animated
        prompt = Prompt() if typing else None
        while (line := await self._next_line(prompt)) is not None:
            if line.startswith("/"):
                await self._stoppable(run_command(self, line))
            else:
                await self.task(line)
        return 0

    def switch_mode(self, words: list[str]) -> None:
        """`/mode`: the mode now and the others; `/mode MODE`: switch (between tasks)."""
        if words:
            try:
                self.mode.current = mode_of(words[0])
            except ValueError as error:
                self.screen.say(f"agentls: {error}")
                return
        for mode, description in MODES.items():
            mark = "*" if mode == self.mode.current else " "
            self.screen.say(f"{mark} {mode}: {description}")


async def _run(
    task: str | None, settings: Settings, options: RunOptions, session: Conversation
) -> int:
    stream = sys.stdout
    root = Path.cwd()
    loop = asyncio.get_running_loop()
    clients = ClientCache()
    try:
        setup = prepare_task(root, settings, clients)
    except ModelError as error:
        stream.write(f"agentls: {error} {error.hint}\n")
        return EXIT_CODES["failed"]
    terminal = TerminalSession(setup, root, options, stream, session, clients)
    # Before anything is awaited, so no Ctrl-C is left to asyncio's own (a traceback).
    loop.add_signal_handler(signal.SIGINT, terminal.interrupt)
    if setup.warning:
        (sys.stderr if options.output_format else stream).write(f"agentls: {setup.warning}\n")
    try:
        if task is None:
            return await terminal.conversation()
        if options.resumed and options.output_format is None:
            terminal.screen.say(options.resumed)
        return EXIT_CODES[(await terminal.task(task)).status]
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        with contextlib.suppress(Exception):
            await terminal.setup.model.client.close()


def run_in_terminal(
    task: str | None,
    options: RunOptions,
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
        approveCommands="always" if options.yes else None,
        provider=provider,
        model=model,
        maxSteps=max_steps,
        sandbox=sandbox,
        sandboxNetwork=sandbox_network,
        mode=mode,
    )
    for problem in problems:
        sys.stderr.write(f"agentls: {problem}\n")
    try:
        return asyncio.run(_run(task, settings, options, session or Conversation()))
    except KeyboardInterrupt:  # before the Ctrl-C handler was in place: nothing had begun
        sys.stdout.write("\n")
        return EXIT_CODES["cancelled"]
