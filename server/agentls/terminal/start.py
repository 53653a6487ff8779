"""`agentls run`'s start: one task (`-p` for a script, `--background` in a worktree), a
conversation gone on with, or a new one whose first prompt is drawn at once. Light to
import: the `agentls` parser names `main`, and what a run needs loads when it runs."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from . import interrupts


def main(arguments: argparse.Namespace) -> int:
    try:
        with interrupts.deferred():  # noted while starting, acted on once safe
            return _run(arguments)
    except KeyboardInterrupt:  # Ctrl-C while starting: nothing had begun
        print()
        return interrupts.EXIT_CODE


def _new_conversation_at_a_terminal(arguments: argparse.Namespace) -> bool:
    """`agentls run` with no task, typed at a terminal that draws a prompt (not a pipe, not a
    dumb one such as Emacs's shell), for a new conversation."""
    if arguments.task or arguments.print_task or arguments.output_format:
        return False
    if arguments.resume or arguments.continue_last:
        return False  # which conversation is said first, and an unknown one refused
    tty = sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
    return tty and os.environ.get("TERM", "") not in ("", "dumb", "unknown")


def _converse(arguments: argparse.Namespace) -> int:
    """A new conversation whose first prompt is drawn at once: agentls and the model's SDK
    load while the first line is typed (`first_prompt.py`)."""
    import asyncio

    from .first_prompt import LoadFailed, first_line
    from .prompt import WELCOME

    def load() -> Any:  # in the loading thread
        from . import history_commands  # noqa: F401 (loaded here, used below)
        from .run import Flags, prepare_conversation

        return prepare_conversation(
            Flags(
                yes=arguments.yes,
                provider=arguments.provider,
                model=arguments.model,
                max_steps=arguments.max_steps,
                sandbox=arguments.sandbox,
                sandbox_network=arguments.sandbox_network,
                mode=arguments.mode,
            )
        )

    try:
        first = asyncio.run(first_line(WELCOME.format(root=Path.cwd()), load))
    except LoadFailed as error:
        print(f"agentls: {error}")
        return 1
    if first is None:  # Ctrl-D
        print()
        return 0
    from .history_commands import saved_session
    from .run import RunOptions, Started, go_on

    for line in first.loaded.said:  # not shown yet: the line was typed first
        print(line)
    session, _ = saved_session(Path.cwd(), None, False)
    started = Started(first.line, first.loaded.value)
    images = tuple(path.absolute() for path in arguments.images)  # for the first line's task
    return go_on(started, RunOptions(arguments.yes, None, "", images), session)


def _run(arguments: argparse.Namespace) -> int:
    if _new_conversation_at_a_terminal(arguments):
        return _converse(arguments)
    from .history_commands import saved_session
    from .run import RunOptions, run_in_terminal

    task = arguments.print_task or arguments.task
    if arguments.background:
        from .background_commands import start

        if arguments.task is None or arguments.print_task is not None:
            print("agentls: --background takes a task: agentls run --background TASK")
            return 2
        return start(arguments.task, arguments.provider, arguments.model, arguments.max_steps)
    if arguments.print_task and arguments.task:
        print("agentls: give the task once: as -p TASK or as the argument", file=sys.stderr)
        return 2
    try:
        session, resumed = saved_session(Path.cwd(), arguments.resume, arguments.continue_last)
    except KeyError:
        print(f"agentls: no saved session {arguments.resume!r} here (see `agentls sessions`)")
        return 1
    headless = arguments.print_task is not None or arguments.output_format is not None
    if headless and task is None:
        print("agentls: --output-format needs a task: agentls run -p TASK", file=sys.stderr)
        return 2
    options = RunOptions(
        arguments.yes,
        (arguments.output_format or "text") if headless else None,
        resumed,
        tuple(path.absolute() for path in arguments.images),
    )
    return run_in_terminal(
        task,
        options,
        arguments.provider,
        arguments.model,
        arguments.max_steps,
        arguments.sandbox,
        arguments.sandbox_network,
        session,
        arguments.mode,
    )
