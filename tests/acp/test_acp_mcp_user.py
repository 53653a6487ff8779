"""The ACP door's way to the user for an MCP server (in process): a question through the
client's `elicitation/create` where it declares forms, declined where it does not; the
servers' prompts as the session's commands."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from acp.schema import AcceptElicitationResponse, ClientCapabilities, ElicitationCapabilities
from agentls.acp.mcp_user import AcpMcpUser, commands_update
from agentls.acp.updates import Updates
from agentls.extensions.mcp_prompts import Command

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


def test_prompts_are_offered_as_commands() -> None:
    server: Any = SimpleNamespace()
    command = Command("mcp__paged__review", "Review a file", ("path",), ("path",), server, "review")
    update = commands_update([command])
    (offered,) = update.available_commands
    assert offered.name == "mcp__paged__review" and offered.description == "Review a file"
    assert offered.input is not None and offered.input.root.hint == "path"
