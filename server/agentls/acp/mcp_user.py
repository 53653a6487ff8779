"""The ACP client as an MCP server's way to the user: a sign-in URL said as a message of the
answer (and opened on this machine); a server's question as the client's `elicitation/create`
(form mode) where it declares `elicitation.form`, else declined with the reason. (The servers'
prompts are the session's commands through the command registry: `sessions._commands`.)"""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp.schema import ElicitationFormSessionMode, ElicitationSchema

from ..extensions.mcp_user import Answer
from .updates import Updates


class AcpMcpUser:
    def __init__(
        self,
        client: Any,
        session_id: str,
        capabilities: Any,
        updates: Updates,
        asking: asyncio.Lock | None = None,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.capabilities = capabilities
        self.updates = updates
        self.asking = asking or asyncio.Lock()
        """The approver's: one question at a time, after what the client was told."""

    def open_url(self, server: str, url: str, why: str) -> None:
        self.updates.send(acp.update_agent_message_text(f"\n({why}: open {url})\n\n"))

    def _asks(self) -> bool:
        elicitation = getattr(self.capabilities, "elicitation", None)
        return getattr(elicitation, "form", None) is not None

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        if not self._asks():
            return Answer(
                "decline",
                reason=f"the MCP server {server} asked a question, but this ACP client "
                "cannot show one (it declares no elicitation)",
            )
        mode = ElicitationFormSessionMode(
            session_id=self.session_id, requested_schema=ElicitationSchema.model_validate(schema)
        )
        try:
            async with self.asking:
                await self.updates.flush()  # the step's tool call before its question
                answer = await self.client.create_elicitation(
                    f"The MCP server {server} asks: {message}", mode
                )
        except Exception as error:  # the client failed to ask: nobody answered
            return Answer("decline", reason=f"the ACP client could not ask: {error}")
        action = getattr(answer, "action", "decline")
        if action == "accept":
            return Answer("accept", dict(getattr(answer, "content", None) or {}))
        return Answer("cancel" if action == "cancel" else "decline")
