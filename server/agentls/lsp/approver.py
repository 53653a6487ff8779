"""Asking the user to approve a shell command: `agent/approveCommand` for a client that
advertises it (`capabilities.experimental.agentls.approveCommand`), else
`window/showMessageRequest`. docs/protocol.md defines both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..interfaces import Decision
from ..visible import visible

APPROVE_COMMAND = "agent/approveCommand"
PROMPT = "The agent wants to run a command"
CHOICES: dict[Decision, str] = {
    "allow": "Allow",
    "allow_task": "Allow for this task",
    "deny": "Deny",
}
"""Each decision and the words the user is shown for it, the same in every client."""


def client_approves_commands(server: LanguageServer) -> bool:
    """Whether the client said it answers `agent/approveCommand`."""
    experimental = server.client_capabilities.experimental
    ours = experimental.get("agentls") if isinstance(experimental, dict) else None
    return isinstance(ours, dict) and ours.get("approveCommand") is True


def _decision(answer: Any) -> Decision:
    """The client's answer to `agent/approveCommand`; anything but a known choice denies."""
    choice = answer.get("choice") if isinstance(answer, dict) else getattr(answer, "choice", None)
    for decision in CHOICES:
        if choice == decision:
            return decision
    return "deny"


class LspApprover:
    def __init__(self, server: LanguageServer, root: Path) -> None:
        self.server = server
        self.root = root

    async def approve(self, command: str) -> Decision:
        if client_approves_commands(self.server):
            return await self._ask_structured(command)
        return await self._ask_by_message(command)

    async def _ask_structured(self, command: str) -> Decision:
        params = {
            # As the user must see it: no control character may disguise what runs.
            "command": visible(command),
            "cwd": str(self.root),
            "prompt": PROMPT,
            "choices": [{"id": key, "title": title} for key, title in CHOICES.items()],
        }
        return _decision(await self.server.protocol.send_request_async(APPROVE_COMMAND, params))

    async def _ask_by_message(self, command: str) -> Decision:
        by_title = {title: decision for decision, title in CHOICES.items()}
        answer = await self.server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"The agent wants to run:\n{visible(command)}",
                actions=[types.MessageActionItem(title) for title in by_title],
            )
        )
        # A dismissed prompt (null) denies.
        return by_title.get(answer.title, "deny") if answer else "deny"
