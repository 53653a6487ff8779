"""Asking the user to approve a shell command with `window/showMessageRequest`."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..interfaces import Decision
from ..visible import visible

ALLOW = "Allow"
ALLOW_TASK = "Allow for this task"
DENY = "Deny"
_DECISIONS: dict[str, Decision] = {ALLOW: "allow", ALLOW_TASK: "allow_task", DENY: "deny"}


class LspApprover:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server

    async def approve(self, command: str) -> Decision:
        answer = await self.server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"The agent wants to run:\n{visible(command)}",
                actions=[types.MessageActionItem(title) for title in _DECISIONS],
            )
        )
        # A dismissed prompt (null) denies.
        return _DECISIONS.get(answer.title, "deny") if answer else "deny"
