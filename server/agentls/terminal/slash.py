"""The slash commands of the `agentls>` prompt (`prompt.COMMANDS` says what each does)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..extensions.commands import approve_waiting, available, described
from ..extensions.trust import Trust
from ..history.sessions import SessionStore
from ..interfaces import ModelError
from ..visible import visible
from ..wiring import prepare_task
from .history_commands import list_sessions, saved_session, undo_last_task
from .prompt import COMMANDS

if TYPE_CHECKING:
    from .run import TerminalSession


async def run_command(terminal: TerminalSession, line: str) -> None:
    """Do what `line` (`/name argument`) asks, saying so; an unknown name lists the known."""
    name, _, argument = line.partition(" ")
    argument = argument.strip()
    say = terminal.screen.say
    if name == "/help":
        for command, meaning in {**COMMANDS, **terminal.shared_commands()}.items():
            say(f"  {command:<10} {meaning}")
    elif name == "/undo":

        async def ask(question: str) -> str:
            return await terminal.screen.ask(question, terminal.answers)

        await undo_last_task(terminal.root, terminal.session, ask)
    elif name == "/sessions":
        list_sessions()
    elif name in ("/resume", "/new"):
        _switch(terminal, name, argument)
    elif name == "/compact":
        result = await terminal.agent().compact()
        say(terminal.setup.outcome(result))
    elif name == "/model":
        _model(terminal, argument)
    elif name == "/mode":
        _mode(terminal, argument)
    elif name.startswith("/mcp__"):  # an MCP prompt: a task whose text the server writes
        await terminal.task(line)
    else:
        known = [*COMMANDS, *terminal.shared_commands()]
        say(f"No command {name}; the commands are: {', '.join(known)}")


async def offer_approval(terminal: TerminalSession, name: str) -> bool:
    """`name` is the project's and waits for approval: ask for it (all the project's waiting
    skills and commands, as a task would), remembered; saying how to approve it later."""
    trust = Trust(terminal.root)
    waiting = available(terminal.root, (), trust).waiting
    question = (
        f"{name} is the project's own, not approved yet. Give the model the project's "
        f"{visible(described(waiting))} (remembered)? [y/N] "
    )
    if (await terminal.screen.ask(question, terminal.answers))[:1] == "y":
        approve_waiting(trust, waiting)
        return True
    terminal.screen.say(
        f"Not approved: {name} does not run. Type it again to be asked, or approve the "
        f"project's skills and commands with `agentls skills approve` in {terminal.root}."
    )
    return False


def _switch(terminal: TerminalSession, name: str, argument: str) -> None:
    root: Path = terminal.root
    if name == "/new":
        terminal.session, _ = saved_session(root, None, False)
        terminal.screen.say("A new conversation.")
        return
    if not argument:
        terminal.screen.say("Which one? /resume ID (the IDs:)")
        list_sessions()
        return
    try:
        terminal.session, resumed = saved_session(root, argument, False)
    except KeyError:
        known = ", ".join(info.id for info in SessionStore(root).list_sessions()[:5]) or "none"
        terminal.screen.say(f"No saved conversation {argument} here (the latest: {known}).")
        return
    terminal.screen.say(resumed)


def _model(terminal: TerminalSession, argument: str) -> None:
    if not argument:
        terminal.screen.say(f"The model is {terminal.setup.model.name}.")
        return
    settings = replace(terminal.setup.settings, model=argument, context_window=None)
    try:
        terminal.setup = prepare_task(terminal.root, settings, terminal.clients)
    except ModelError as error:
        terminal.screen.say(f"{error} {error.hint}".strip())
        return
    terminal.screen.say(f"The model is now {terminal.setup.model.name}.")


def _mode(terminal: TerminalSession, argument: str) -> None:
    terminal.switch_mode(argument.split())
