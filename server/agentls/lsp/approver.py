"""Asking the user to approve a shell command, or a write the editor cannot make itself.

A command goes as `agent/approveCommand` to a client that advertises it
(`capabilities.experimental.agentls.approveCommand`: the command, its folder and the
choices, as data). Everything else goes as `window/showMessageRequest`: no capability
announces that request before LSP 3.16 and eglot handles it without announcing it, so it is
sent to every client; a client that answers with an error cannot ask, and the
`approveCommands`/`allowedCommands` rule alone decides (the refusal says so).
docs/protocol.md defines both.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from ..interfaces import Decision, Unanswered
from ..permissions.gate import always_for, fetch_question
from ..visible import visible

APPROVE_COMMAND = "agent/approveCommand"
PROMPT = "The agent wants to run a command"
FETCH_PROMPT = "The agent wants to fetch a page"
CHOICES: dict[Decision, str] = {
    "allow": "Allow",
    "allow_task": "Allow for this task",
    "deny": "Deny",
}
"""Each decision and the words the user is shown for it, the same in every client."""
ALLOW, DENY = CHOICES["allow"], CHOICES["deny"]
RUN_PLAN, KEEP_PLANNING = "Carry out the plan", "Keep planning"
TRUST, NOT_NOW = "Allow (remembered)", "Not now"

CANNOT_ASK = (
    "This editor cannot ask the user to approve it (window/showMessageRequest failed: {error}), "
    "so it was refused. Tell the user; they can allow it with the approveCommands setting"
    "{commands}."
)


def client_approves_commands(server: LanguageServer) -> bool:
    """Whether the client said it answers `agent/approveCommand`."""
    experimental = server.client_capabilities.experimental
    ours = experimental.get("agentls") if isinstance(experimental, dict) else None
    return isinstance(ours, dict) and ours.get("approveCommand") is True


def _choices(host: str) -> dict[Decision, str]:
    """A command's choices; a fetch's add "Always for HOST", before "Deny"."""
    if not host:
        return CHOICES
    always: dict[Decision, str] = {"allow_always": always_for(visible(host))}
    return {"allow": ALLOW, **always, "allow_task": CHOICES["allow_task"], "deny": DENY}


def _decision(answer: Any, choices: dict[Decision, str]) -> Decision:
    """The client's answer to `agent/approveCommand`; anything but a known choice denies."""
    choice = answer.get("choice") if isinstance(answer, dict) else getattr(answer, "choice", None)
    for decision in choices:
        if choice == decision:
            return decision
    return "deny"


class LspApprover:
    def __init__(self, server: LanguageServer, root: Path) -> None:
        self.server = server
        self.root = root
        self.cannot_ask = ""
        """Why the client cannot be asked, once it failed to answer."""
        self.asking = asyncio.Lock()
        """One question at a time: the read-only calls of a turn run together, and a client
        may show (or answer) only one message request at once."""

    async def _ask(self, message: str, actions: list[str]) -> str | None:
        """The title the user chose, None when dismissed; raises JsonRpcException."""
        async with self.asking:
            answer = await self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=message,
                    actions=[types.MessageActionItem(title) for title in actions],
                )
            )
        return answer.title if answer else None

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        choices = _choices(host)
        if client_approves_commands(self.server):
            return await self._ask_structured(command, unsandboxed, choices)
        if not self.cannot_ask:
            try:
                where = " outside the sandbox" if unsandboxed else ""
                message = f"The agent wants to run{where}:\n{visible(command)}"
                if host:
                    message = fetch_question(visible(command))
                title = await self._ask(message, list(choices.values()))
                # A dismissed prompt (null) denies.
                by_title = {title: decision for decision, title in choices.items()}
                return by_title.get(title or DENY, "deny")
            except JsonRpcException as error:
                self.cannot_ask = error.message or type(error).__name__
        raise Unanswered(
            CANNOT_ASK.format(error=self.cannot_ask, commands=" or the allowedCommands setting")
        )

    async def _ask_structured(
        self, command: str, unsandboxed: bool, choices: dict[Decision, str]
    ) -> Decision:
        fetch = "allow_always" in choices
        params = {
            # As the user must see it: no control character may disguise what runs.
            "command": visible(command),
            "cwd": str(self.root),
            "sandboxed": not unsandboxed,
            "prompt": FETCH_PROMPT
            if fetch
            else PROMPT + (" outside the sandbox" if unsandboxed else ""),
            "choices": [{"id": key, "title": title} for key, title in choices.items()],
        }
        async with self.asking:
            answer = await self.server.protocol.send_request_async(APPROVE_COMMAND, params)
        return _decision(answer, choices)

    async def approve_plan(self, plan: str) -> bool:
        """The plan mode's end: the plan shown, and whether to carry it out (a client that
        cannot ask keeps the session planning)."""
        if self.cannot_ask:
            return False
        try:
            title = await self._ask(
                f"The agent's plan:\n{visible(plan)}", [RUN_PLAN, KEEP_PLANNING]
            )
        except JsonRpcException as error:
            self.cannot_ask = error.message or type(error).__name__
            return False
        return title == RUN_PLAN

    async def approve_project(self, what: str) -> bool:
        if self.cannot_ask:
            return False
        try:
            title = await self._ask(f"The project asks to {visible(what)}.", [TRUST, NOT_NOW])
        except JsonRpcException as error:
            self.cannot_ask = error.message or type(error).__name__
            return False
        return title == TRUST

    async def approve_write(self, description: str) -> Decision:
        """Whether agentls may `description` (e.g. "create notes.md (...)") on disk itself,
        the client being unable to show the edit (`interfaces.AsksWrites`; only the
        permission gate asks)."""
        if not self.cannot_ask:
            try:
                title = await self._ask(f"The agent wants to {visible(description)}", [ALLOW, DENY])
                return "allow" if title == ALLOW else "deny"
            except JsonRpcException as error:
                self.cannot_ask = error.message or type(error).__name__
        raise Unanswered(CANNOT_ASK.format(error=self.cannot_ask, commands=""))
