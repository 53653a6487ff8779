"""The `agentls>` prompt on `prompt_toolkit`: line editing, a history kept across sessions in
agentls's state folder (Up, Ctrl-R), several lines (Esc Enter, or a line ending in `\\`), and
the slash commands completed as they are typed."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from ..disk.state import private_dir, state_base

PROMPT = "agentls> "
WELCOME = (
    "agentls in {root}: each line is a task in one conversation; /help lists the commands. "
    "Ctrl-C cancels a task, Ctrl-D leaves."
)

COMMANDS = {
    "/help": "what the commands do",
    "/undo": "undo the last task's changes (asks first)",
    "/sessions": "this folder's saved conversations",
    "/resume": "go on with a saved conversation: /resume ID",
    "/new": "start a new conversation",
    "/compact": "summarise the conversation so far, to free its room",
    "/model": "show the model, or use another: /model ID",
    "/mode": "show or switch the mode: /mode default | acceptEdits | plan",
}
"""The slash commands and what each does, as /help and the completion show them."""

WAITING = "[waiting for your approval: type it to be asked]"
"""How /help and the completion mark a project's skill or command not approved yet."""


class _Commands(Completer):
    def __init__(self, shared: Callable[[], dict[str, str]]) -> None:
        self.shared = shared
        """The skills' and commands' `/name`s and descriptions, as they are now."""

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        typed = document.text_before_cursor
        if not typed.startswith("/") or " " in typed:
            return
        for name, meaning in {**self.shared(), **COMMANDS}.items():
            if name.startswith(typed):
                yield Completion(name, -len(typed), display_meta=meaning)


def _keys() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    # Not while searching (Ctrl-R): there prompt_toolkit's own Enter accepts the match found.
    @keys.add("enter", filter=~is_searching)
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):  # a line that goes on
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    return keys


def history_file() -> str:
    """The prompt's history, shared by every folder (as a shell's is), readable by the user
    only: a task may name what is private."""
    path = private_dir(state_base()) / "prompt-history"
    descriptor = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
    os.close(descriptor)
    return str(path)


class Prompt:
    """The next task typed at a terminal."""

    def __init__(self, shared: Callable[[], dict[str, str]] = dict) -> None:
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(history_file()),
            completer=_Commands(shared),
            complete_while_typing=True,
            key_bindings=_keys(),
        )

    async def line(self) -> str | None:
        """The line typed (stripped; may be empty), or None when the user leaves (Ctrl-D).
        Ctrl-C raises KeyboardInterrupt: the line is dropped."""
        try:
            # Ctrl-C is a key here (the terminal is raw while the prompt reads), not SIGINT.
            text = await self.session.prompt_async(PROMPT, handle_sigint=False)
        except EOFError:
            return None
        return text.strip()
