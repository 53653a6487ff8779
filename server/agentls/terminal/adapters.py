"""The terminal's adapters for the loop: edits shown as diffs and written only after `y` (or
`--yes`), commands asked; what they show goes through the task's `Screen`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..disk import files
from ..disk.landing import land_on_disk
from ..disk.paths import relative
from ..edits import unified_diff
from ..extensions.mcp_elicitation import ask_fields
from ..extensions.mcp_user import Answer
from ..interfaces import Change, Decision, Landed
from ..permissions.gate import always_for, fetch_question
from ..visible import visible
from .answers import Answers
from .screen import Screen


class DiskWorkspace:
    """Reading for a door without an editor: every file is read from the disk."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def read_text(self, path: Path) -> str:
        return files.read_text(self.root, path)

    def open_documents(self) -> dict[Path, str]:
        return {}


class TerminalWorkspace(DiskWorkspace):
    def __init__(self, root: Path, yes: bool, screen: Screen, answers: Answers) -> None:
        super().__init__(root)
        self.yes = yes
        self.screen = screen
        self.answers = answers

    async def propose(self, change: Change) -> Landed:
        name = relative(self.root, change.path)
        self.screen.diff(unified_diff(change.old_text or "", change.new_text, name))
        question = f"Apply this change to {visible(name, lines=False)}? [y/N] "
        if (
            change.reviewed
            and not self.yes
            and await self.screen.ask(question, self.answers) != "y"
        ):
            return Landed(False, rejected_reason="declined in the terminal")
        return land_on_disk(self.root, change)


class TerminalApprover:
    def __init__(self, screen: Screen, answers: Answers) -> None:
        self.screen = screen
        self.answers = answers
        self.asking = asyncio.Lock()
        """One question at a time: the read-only calls of a turn run together, and two
        questions at once would share a line and wait for stdin side by side (one forever)."""

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        where = " outside the sandbox" if unsandboxed else ""
        question = f"Run `{visible(command)}`{where}? [y]es / [a]ll this task / [N]o "
        if host:
            always = always_for(visible(host)).lower()
            question = (
                f"{fetch_question(visible(command))} [y]es / [h] {always} / [a]ll this task / [N]o "
            )
        async with self.asking:
            answer = await self.screen.ask(question, self.answers)
        answers: dict[str, Decision] = {"y": "allow", "a": "allow_task"}
        if host:
            answers["h"] = "allow_always"
        return answers.get(answer[:1], "deny")

    async def approve_project(self, what: str) -> bool:
        question = f"The project asks to {visible(what)}. Allow (remembered)? [y/N] "
        async with self.asking:
            return (await self.screen.ask(question, self.answers))[:1] == "y"

    async def approve_plan(self, plan: str) -> bool:
        async with self.asking:
            self.screen.say(f"\nThe plan:\n{visible(plan)}\n")
            answer = await self.screen.ask("Carry out this plan? [y/N] ", self.answers)
        return answer[:1] == "y"


class TerminalMcpUser:
    """A server's sign-in URL printed (and opened), its questions asked field by field, one
    question at a time with the approver's (`asking`: its lock)."""

    def __init__(
        self, screen: Screen, answers: Answers, asking: asyncio.Lock | None = None
    ) -> None:
        self.screen = screen
        self.answers = answers
        self.asking = asking or asyncio.Lock()

    def open_url(self, server: str, url: str, why: str) -> None:
        self.screen.say(f"\n{visible(why)}: open {visible(url)}")

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        async with self.asking:  # a read-only call's or a subagent's question waits
            return await self._elicit(server, message, schema)

    async def _elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        self.screen.say(f"\nThe MCP server {server} asks: {visible(message)}")
        if not (schema.get("properties") or {}):
            answer = await self.screen.ask("Accept? [y/N] ", self.answers)
            return Answer("accept" if answer[:1] == "y" else "decline")

        async def ask(question: str) -> str | None:
            return await self.screen.ask_text(visible(question), self.answers)

        content = await ask_fields(schema, ask, self.screen.say)
        if content is None:
            return Answer("cancel")
        answer = await self.screen.ask("Send these answers? [Y/n] ", self.answers)
        return Answer("decline") if answer[:1] == "n" else Answer("accept", content)
