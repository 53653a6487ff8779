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
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

from ..agent.conversation import Conversation
from ..agent.event_progress import EventProgress
from ..agent.task_json import task_json
from ..agent.task_result import CANCELLED_BY_USER, TaskResult
from ..extensions.commands import Command, for_workspace
from ..interfaces import Approver, ModelError
from ..models import capabilities
from ..models.anthropic import ClientCache
from ..permissions.modes import MODES, SessionMode, mode_of
from ..settings.assembly import Settings
from ..settings.user import load as load_user_settings
from ..visible import visible
from ..wiring import SessionServers, TaskSetup, prepare_task
from . import interrupts
from .adapters import TerminalApprover, TerminalMcpUser, TerminalWorkspace
from .answers import Answers
from .attachments import task_images
from .first_prompt import Loaded, LoadFailed
from .headless import (
    Events,
    HeadlessApprover,
    HeadlessMcpUser,
    HeadlessWorkspace,
    OutputFormat,
)
from .prompt import COMMANDS, PROMPT, WAITING, WELCOME, Prompt
from .screen import Screen
from .slash import offer_approval, run_command

EXIT_CODES = {"done": 0, "failed": 1, "step_limit": 2, "cancelled": 130}

T = TypeVar("T")


@dataclass
class RunOptions:
    """What `agentls run` was asked besides the task."""

    yes: bool = False
    output_format: OutputFormat | None = None
    """None: a person at a terminal; else `-p`, for a script."""
    resumed: str = ""
    """The conversation gone on with, in words ("" for a new one)."""
    images: tuple[Path, ...] = ()
    """Images given with `-i`, for the first task."""


@dataclass
class Prepared:
    """What a task needs, made before the conversation: its settings and setup."""

    settings: Settings
    setup: TaskSetup
    clients: ClientCache


@dataclass
class Started:
    """A conversation begun at the first prompt (`first_prompt.py`): the line typed there,
    and what was prepared meanwhile."""

    line: str
    prepared: Prepared


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
        self.headless: HeadlessApprover | None = None
        """The approver of the `-p` task, which tells what nobody could approve."""
        self.questions: HeadlessMcpUser | None = None
        """Who declines the servers' questions under `-p`, and remembers them."""
        self._shared: dict[str, str] | None = None
        self._held: set[str] = set()
        self.servers: SessionServers | None = None
        """agentls's own language servers, kept between a conversation's tasks."""

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
        approver: Approver
        if self.options.output_format is not None:
            yes = self.options.yes
            workspace: Any = HeadlessWorkspace(self.root, yes, self.events)
            approver = self.headless = HeadlessApprover(yes, self.events)
            progress: Any = EventProgress(self.events)
            self.questions = HeadlessMcpUser(self.events, self.options.output_format)
            user: Any = self.questions
        else:
            workspace = TerminalWorkspace(self.root, self.options.yes, self.screen, self.answers)
            asker = TerminalApprover(self.screen, self.answers)
            approver = asker
            progress = self.screen
            # A server's question waits for the approver's: one question at a time.
            user = TerminalMcpUser(self.screen, self.answers, asker.asking)
        return self.setup.agent(
            workspace,
            approver,
            progress,
            self.session,
            mode=self.mode,
            mcp_user=user,
            servers=self.servers,
        )

    async def task(self, text: str) -> TaskResult:
        given, self.options = self.options.images, replace(self.options, images=())
        attached = await task_images(text, given, self.root)
        if self.options.output_format is None:
            for image in attached:
                self.screen.say(image.placeholder or f"(attached {image.size})", "dim")
        agent = self.agent()
        if self.stopped:  # Ctrl-C while starting: the task is not begun
            self.stopped = False  # in a conversation, the next line is a task again
            result = TaskResult(status="cancelled", summary=CANCELLED_BY_USER)
        else:
            if self.options.output_format is None:
                self.screen.thinking()
            try:
                # The loop answers a cancel itself, with a `cancelled` result.
                result = await self._stoppable(agent.run(text, images=attached))
            except asyncio.CancelledError:
                if not self._interrupted:  # the program is stopping, not the user's Ctrl-C
                    raise
                # Ctrl-C before the task's first step: the loop never saw it.
                result = TaskResult(status="cancelled", summary=CANCELLED_BY_USER)
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
        setup = self.setup
        answer = task_json(result, outcome, setup.model.name, setup.price, setup.settings.prices)
        answer["session"] = self.session.id
        not_approved = self.headless.not_approved if self.headless else []
        if not_approved:
            answer["notApproved"] = not_approved
        if self.questions and self.questions.declined and output_format == "json":
            answer["elicitations"] = self.questions.declined
        if output_format == "stream-json":
            self.events.send("usage", **answer["usage"])
            self.events.send("outcome", **answer)
        elif output_format == "json":
            self.stream.write(json.dumps(answer, ensure_ascii=False) + "\n")
        else:
            self.stream.write(result.summary.rstrip("\n") + "\n")
            sys.stderr.write(outcome + "\n")
            for note in not_approved:
                sys.stderr.write(f"agentls: {note}\n")
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

    async def conversation(self, first: str | None = None) -> int:
        """Each line a task or a slash command, until the user leaves; `first`: the line
        typed at the first prompt, below the welcome (`first_prompt.py`)."""
        if first is None:
            self.screen.say(WELCOME.format(root=self.root))
        if self.options.resumed:
            self.screen.say(self.options.resumed)
        self.servers = SessionServers()  # stopped as the run ends (`_run`)
        # A real prompt where someone types; lines read plainly from a pipe, or from a dumb
        # terminal (Emacs's shell edits the line itself, and sends it whole).
        typing = sys.stdin is not None and sys.stdin.isatty() and self.screen.animated
        prompt = Prompt(self.shared_commands) if typing else None
        while (line := first or await self._next_line(prompt)) is not None:
            first = None
            name = line.split(maxsplit=1)[0]
            if name in self.held_commands():  # the project's, waiting: approval, then the task
                approved = await self._stoppable(offer_approval(self, name))
                self._shared = None
                if approved:
                    await self.task(line)
            elif name in COMMANDS or (name.startswith("/") and name not in self.shared_commands()):
                await self._stoppable(run_command(self, line))
            else:  # a task, or a skill's or command's `/name arguments`, which the task expands
                await self.task(line)
                self._shared = None  # the project's may have been approved meanwhile
        return 0

    def shared_commands(self) -> dict[str, str]:
        """The skills' and commands' `/name`s, described: the project's waiting for approval
        marked so (typing one offers the approval)."""
        if self._shared is None:
            shared = for_workspace(self.root, self.setup.settings.plugins)
            self._held = {f"/{name}" for name in shared.held}
            self._shared = {
                **{f"/{c.name}": _described(c) for c in shared.listing()},
                **{f"/{n}": f"{WAITING} {_described(c)}" for n, c in sorted(shared.held.items())},
            }
        return self._shared

    def held_commands(self) -> set[str]:
        """The project's `/name`s waiting for approval."""
        self.shared_commands()
        return self._held

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
    task: str | None,
    settings: Settings,
    options: RunOptions,
    session: Conversation,
    started: Started | None = None,
) -> int:
    stream = sys.stdout
    root = Path.cwd()
    loop = asyncio.get_running_loop()
    if started is not None:  # its warning was shown at the first prompt
        prepared = started.prepared
        setup, clients = prepared.setup, prepared.clients
    else:
        clients = ClientCache()
        try:
            setup = prepare_task(root, settings, clients)
        except ModelError as error:
            stream.write(f"agentls: {error} {error.hint}\n")
            return EXIT_CODES["failed"]
    terminal = TerminalSession(setup, root, options, stream, session, clients)
    # Before anything is awaited, so no Ctrl-C is left to asyncio's own (a traceback).
    loop.add_signal_handler(signal.SIGINT, terminal.interrupt)
    if interrupts.came():  # while starting (interrupts.py): the task is not begun
        terminal.interrupt()
    if started is None:
        said = [setup.warning] if setup.warning else []
        model = setup.model
        said += await capabilities.before_task(
            model.endpoint, model.name, setup.settings.context_window
        )
        for warning in said:
            (sys.stderr if options.output_format else stream).write(f"agentls: {warning}\n")
    try:
        if task is None:
            return await terminal.conversation(started.line if started else None)
        if options.resumed and options.output_format is None:
            terminal.screen.say(options.resumed)
        return EXIT_CODES[(await terminal.task(task)).status]
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if terminal.servers is not None:
            await asyncio.shield(terminal.servers.close())
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
    flags = Flags(
        yes=options.yes,
        provider=provider,
        model=model,
        max_steps=max_steps,
        sandbox=sandbox,
        sandbox_network=sandbox_network,
        mode=mode,
    )
    settings, problems = flags.settings()
    for problem in problems:
        sys.stderr.write(f"agentls: {problem}\n")
    return _in_loop(_run(task, settings, options, session or Conversation()))


def go_on(started: Started, options: RunOptions, session: Conversation) -> int:
    """The conversation begun at the first prompt (`first_prompt.py`), from its first line."""
    settings = started.prepared.settings
    return _in_loop(_run(None, settings, options, session, started))


def _described(command: Command) -> str:
    return command.description + (f" ({command.hint})" if command.hint else "")


def _in_loop(run: Coroutine[Any, Any, int]) -> int:
    try:
        return asyncio.run(run)
    except KeyboardInterrupt:  # before the Ctrl-C handler was in place: nothing had begun
        sys.stdout.write("\n")
        return EXIT_CODES["cancelled"]


@dataclass(frozen=True, kw_only=True)
class Flags:
    """What `agentls run`'s flags set on top of the user's settings file."""

    yes: bool = False
    provider: str | None = None
    model: str | None = None
    max_steps: int | None = None
    sandbox: Literal["auto", "required", "off"] | None = None
    sandbox_network: bool | None = None
    mode: str | None = None

    def settings(self) -> tuple[Settings, list[str]]:
        """The settings, and the problems of the user's file."""
        return load_user_settings(
            approveCommands="always" if self.yes else None,
            provider=self.provider,
            model=self.model,
            maxSteps=self.max_steps,
            sandbox=self.sandbox,
            sandboxNetwork=self.sandbox_network,
            mode=self.mode,
        )


def prepare_conversation(flags: Flags) -> Loaded[Prepared]:
    """The settings and the task's setup (the model's SDK imported with its client), made in
    a thread while the first line is typed; what the user should read, as lines. Raises
    LoadFailed when no task can run (no API key, say)."""
    settings, problems = flags.settings()
    clients = ClientCache()
    try:
        setup = prepare_task(Path.cwd(), settings, clients)
    except ModelError as error:
        raise LoadFailed(f"{error} {error.hint}".strip()) from None
    said = [f"agentls: {problem}" for problem in problems]
    if setup.warning:
        said.append(f"agentls: {setup.warning}")
    return Loaded(Prepared(settings, setup, clients), said)
