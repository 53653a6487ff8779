"""The ACP door's way to the user for an MCP server (in process): a question through the
client's `elicitation/create` where it declares forms, declined where it does not (the
servers' prompts as the session's commands: tests/extensions/test_mcp_users.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import acp
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    ElicitationCapabilities,
)
from agentls.acp.approver import AcpApprover
from agentls.acp.mcp_user import AcpMcpUser
from agentls.acp.updates import Updates

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "default": "Ada"}},
    "required": ["name"],
}


class Client:
    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.updates: list[Any] = []

    async def create_elicitation(self, message: str, mode: Any) -> Any:
        self.asked.append((message, mode))
        return AcceptElicitationResponse(action="accept", content={"name": "Grace"})

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_a_client_that_declares_forms_is_asked() -> None:
    client = Client()
    capabilities = ClientCapabilities(elicitation=ElicitationCapabilities(form={}))
    user = AcpMcpUser(client, "s1", capabilities, Updates(client, "s1"))
    answer = await user.elicit("paged", "Who are you?", SCHEMA)
    assert (answer.action, answer.content) == ("accept", {"name": "Grace"})
    ((message, mode),) = client.asked
    assert message == "The MCP server paged asks: Who are you?"
    assert mode.session_id == "s1" and "name" in (mode.requested_schema.properties or {})


async def test_a_client_without_forms_has_the_question_declined() -> None:
    client = Client()
    user = AcpMcpUser(client, "s1", ClientCapabilities(), Updates(client, "s1"))
    answer = await user.elicit("paged", "Who are you?", SCHEMA)
    assert answer.action == "decline" and "the MCP server paged asked" in answer.reason
    assert client.asked == []


class _Slow(Client):
    """A client that takes a while to answer each question, counting those open at once and
    noting in which order updates and questions reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.open = self.most = 0
        self.seen: list[str] = []

    async def _question(self, what: str) -> None:
        self.open += 1
        self.most = max(self.most, self.open)
        self.seen.append(what)
        await asyncio.sleep(0.05)
        self.open -= 1

    async def request_permission(self, session_id: str, tool_call: Any, options: Any) -> Any:
        await self._question(f"permission {tool_call.title}")
        return SimpleNamespace(outcome=AllowedOutcome(option_id="allow", outcome="selected"))

    async def create_elicitation(self, message: str, mode: Any) -> Any:
        await self._question("elicitation")
        return await super().create_elicitation(message, mode)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await asyncio.sleep(0.01)  # sent later than queued: a question must wait for it
        self.seen.append("update")
        await super().session_update(session_id, update)


async def test_a_question_waits_for_the_approvers_and_for_the_updates_before_it() -> None:
    """The read-only calls of a turn run together (an MCP tool among them): a server's
    question is one question among the approver's, after what the client was told."""
    client = _Slow()
    updates = Updates(client, "s1")
    progress: Any = SimpleNamespace(current=None, updates=updates)
    approver = AcpApprover(client, "s1", progress, SimpleNamespace())  # type: ignore[arg-type]
    capabilities = ClientCapabilities(elicitation=ElicitationCapabilities(form={}))
    user = AcpMcpUser(client, "s1", capabilities, updates, approver.asking)
    updates.send(acp.update_agent_message_text("the step so far"))
    answers = await asyncio.gather(
        user.elicit("paged", "Who are you?", SCHEMA), approver.approve("read_file a.txt")
    )
    assert answers[0].action == "accept" and answers[1] == "allow"
    assert client.most == 1
    assert client.seen == ["update", "elicitation", "permission read_file a.txt"]
