"""Asking the user to approve a shell command, or a write the editor cannot make itself,
with `window/showMessageRequest`.

No capability announces that request before LSP 3.16 and eglot handles it without
announcing it, so it is sent to every client; a client that answers with an error cannot
ask, and the `approveCommands`/`allowedCommands` rule alone decides (the refusal says so).
"""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from ..interfaces import Decision
from ..settings import Settings
from ..tools.base import ToolError
from ..visible import visible

ALLOW = "Allow"
ALLOW_TASK = "Allow for this task"
DENY = "Deny"
_DECISIONS: dict[str, Decision] = {ALLOW: "allow", ALLOW_TASK: "allow_task", DENY: "deny"}

CANNOT_ASK = (
    "This editor cannot ask the user to approve it (window/showMessageRequest failed: {error}), "
    "so it was refused. Tell the user; they can allow it with the approveCommands setting"
    "{commands}."
)


class LspApprover:
    def __init__(self, server: LanguageServer, settings: Settings) -> None:
        self.server = server
        self.settings = settings
        self.cannot_ask = ""
        """Why the client cannot be asked, once it failed to answer."""

    async def _ask(self, message: str, actions: list[str]) -> str | None:
        """The title the user chose, None when dismissed; raises JsonRpcException."""
        answer = await self.server.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=message,
                actions=[types.MessageActionItem(title) for title in actions],
            )
        )
        return answer.title if answer else None

    async def approve(self, command: str, unsandboxed: bool = False) -> Decision:
        if not self.cannot_ask:
            try:
                where = " outside the sandbox" if unsandboxed else ""
                message = f"The agent wants to run{where}:\n{visible(command)}"
                title = await self._ask(message, list(_DECISIONS))
                # A dismissed prompt (null) denies.
                return _DECISIONS.get(title or DENY, "deny")
            except JsonRpcException as error:
                self.cannot_ask = error.message or type(error).__name__
        raise ToolError(
            CANNOT_ASK.format(error=self.cannot_ask, commands=" or the allowedCommands setting")
        )

    async def approve_write(self, description: str) -> str:
        """Whether the agent may `description` (e.g. "create notes.md (...)") on disk itself:
        "" when allowed, else the refusal for the model."""
        if self.settings.approve_commands == "always":
            return ""
        if not self.cannot_ask:
            try:
                title = await self._ask(f"The agent wants to {visible(description)}", [ALLOW, DENY])
                return "" if title == ALLOW else "the user rejected it"
            except JsonRpcException as error:
                self.cannot_ask = error.message or type(error).__name__
        return CANNOT_ASK.format(error=self.cannot_ask, commands="")
