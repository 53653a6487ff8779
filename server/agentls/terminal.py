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
from typing import TextIO

from . import environment, files
from .agent import Agent, Session, TaskResult
from .edits import unified_diff
from .interfaces import Change, Decision, Landed, ModelError
from .model import AnthropicModel, ClientCache
from .paths import relative
from .settings import DEFAULT_MODEL, Settings
from .shell import SubprocessShell
from .tools import ToolContext

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


async def ask(question: str, stream: TextIO) -> str:
    """A line from stdin, read without blocking the loop, so Ctrl-C cancels the wait at once."""
    stream.write(question)
    stream.flush()
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()
    descriptor = sys.stdin.fileno()

    def on_ready() -> None:
        if not answer.done():
            answer.set_result(sys.stdin.readline())

    try:
        loop.add_reader(descriptor, on_ready)
    except (OSError, ValueError):
        # A regular file (or /dev/null) cannot be polled, and never makes us wait.
        return sys.stdin.readline().strip().lower()
    try:
        return (await answer).strip().lower()
    finally:
        loop.remove_reader(descriptor)


class TerminalWorkspace:
    def __init__(self, root: Path, yes: bool, stream: TextIO) -> None:
        self.root = root
        self.yes = yes
        self.stream = stream
        self.style = Style(stream)

    async def read_text(self, path: Path) -> str:
        return files.read_text(path)

    async def propose(self, change: Change) -> Landed:
        name = relative(self.root, change.path)
        self.stream.write(
            self.style.diff(unified_diff(change.old_text or "", change.new_text, name))
        )
        if not self.yes and await ask(f"Apply this change to {name}? [y/N] ", self.stream) != "y":
            return Landed(False, rejected_reason="declined in the terminal")
        try:
            current = files.read_text(change.path)
        except FileNotFoundError:
            current = None
        if current != change.old_text:
            # Changed by someone else while the question waited: writing would lose that.
            return Landed(
                False, rejected_reason="the file changed on disk meanwhile; read it again"
            )
        files.write_atomic(change.path, change.new_text)
        return Landed(True, change.new_text)


class TerminalApprover:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    async def approve(self, command: str) -> Decision:
        answer = await ask(f"Run `{command}`? [y]es / [a]ll this task / [N]o ", self.stream)
        return {"y": "allow", "a": "allow_task"}.get(answer[:1], "deny")  # type: ignore[return-value]


class TerminalProgress:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.style = Style(stream)

    def step(self, tool: str, summary: str) -> None:
        self.stream.write("\n" + self.style("1;34", f"▸ {tool}: {summary}") + "\n")
        self.stream.flush()

    def step_done(self, tool: str, summary: str, ok: bool, detail: str) -> None:
        mark = self.style("32", "✓") if ok else self.style("31", "✗")
        self.stream.write(f"  {mark} {detail}\n")
        self.stream.flush()

    def text(self, delta: str) -> None:
        self.stream.write(delta)
        self.stream.flush()


def _report(result: TaskResult, stream: TextIO) -> None:
    usage = result.usage
    stream.write(
        f"\n\n[{result.status}] {result.steps} steps, edits {result.edits_applied} applied / "
        f"{result.edits_rejected} rejected, tokens: {usage.input} in, {usage.cache_read} cache "
        f"read, {usage.cache_write} cache write, {usage.output} out\n"
    )
    if result.status == "failed":
        stream.write(f"{result.summary}\n{result.error_hint}\n")


async def _run(task: str, settings: Settings, yes: bool, stream: TextIO) -> int:
    root = Path.cwd()
    env = environment.merged(root)
    try:
        client = ClientCache().get(env)
    except ModelError as error:
        stream.write(f"agentls: {error} {error.hint}\n")
        return EXIT_CODES["failed"]
    model = AnthropicModel(
        client,
        settings.model or env.get("AGENTLS_MODEL") or DEFAULT_MODEL,
        settings.max_tokens,
        env,
    )
    tools = ToolContext(
        workspace=TerminalWorkspace(root, yes, stream),
        shell=SubprocessShell(root, environment.scrubbed(os.environ)),
        approver=TerminalApprover(stream),
        settings=settings,
        secrets=environment.secret_values(env),
    )
    job = asyncio.ensure_future(Agent(model, tools, TerminalProgress(stream), Session()).run(task))
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, job.cancel)
    try:
        result = await job
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        with contextlib.suppress(Exception):
            await client.close()
    _report(result, stream)
    return EXIT_CODES[result.status]


def run_in_terminal(task: str, yes: bool, model: str | None, max_steps: int | None) -> int:
    settings = Settings(approve_commands="always" if yes else "ask")
    if model:
        settings = replace(settings, model=model)
    if max_steps:
        settings = replace(settings, max_steps=max_steps)
    return asyncio.run(_run(task, settings, yes, sys.stdout))
