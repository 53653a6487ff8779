"""The LSP approver in process, against a server double: one question at a time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agentls.lsp.approver import LspApprover
from agentls.lsp.mcp_user import ELICIT, LspMcpUser
from lsprotocol import types


class _Client:
    def __init__(self) -> None:
        self.open = self.most = 0
        self.client_capabilities = SimpleNamespace(experimental=None)

    async def window_show_message_request_async(self, params: Any) -> Any:
        self.open += 1
        self.most = max(self.most, self.open)
        await asyncio.sleep(0.05)
        self.open -= 1
        return types.MessageActionItem(params.actions[0].title)


async def test_questions_are_put_one_at_a_time(tmp_path: Path) -> None:
    """L2: the read-only calls of a turn run together; their questions must not."""
    client = _Client()
    approver = LspApprover(client, tmp_path)  # type: ignore[arg-type]
    answers = await asyncio.gather(approver.approve("read_file a"), approver.approve("read_file b"))
    assert answers == ["allow", "allow"] and client.most == 1


class _Asked(_Client):
    """A client that answers an MCP server's questions (`agent/elicit`) as slowly."""

    def __init__(self) -> None:
        super().__init__()
        self.client_capabilities = SimpleNamespace(experimental={"agentls": {"elicit": True}})
        self.protocol = self

    async def send_request_async(self, method: str, params: Any) -> Any:
        assert method == ELICIT
        await self.window_show_message_request_async(
            SimpleNamespace(actions=[types.MessageActionItem("ok")])
        )
        return {"action": "accept", "content": {"name": "Grace"}}


async def test_a_servers_question_is_one_question_among_the_approvers(tmp_path: Path) -> None:
    """An MCP tool's call runs beside the other read-only calls: the editor shows its form
    once the approval before it is answered, never two at once."""
    client = _Asked()
    approver = LspApprover(client, tmp_path)  # type: ignore[arg-type]
    user = LspMcpUser(client, approver.asking)  # type: ignore[arg-type]
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    approved, answer = await asyncio.gather(
        approver.approve("read_file a"), user.elicit("paged", "Who are you?", schema)
    )
    assert approved == "allow" and answer.content == {"name": "Grace"} and client.most == 1


class _Structured(_Client):
    """A client that answers `agent/approveCommand` with its second choice."""

    def __init__(self) -> None:
        super().__init__()
        self.client_capabilities = SimpleNamespace(
            experimental={"agentls": {"approveCommand": True}}
        )
        self.protocol = self
        self.sent: list[Any] = []

    async def send_request_async(self, method: str, params: Any) -> Any:
        self.sent.append(params)
        return {"choice": params["choices"][1]["id"]}


async def test_a_fetch_is_asked_as_a_fetch_with_always_for_its_host(tmp_path: Path) -> None:
    """Issue 40, row 11: the editors show the server's words and choices as they come."""
    client = _Structured()
    approver = LspApprover(client, tmp_path)  # type: ignore[arg-type]
    decision = await approver.approve("https://docs.python.org/3/", host="docs.python.org")
    (asked,) = client.sent
    assert decision == "allow_always" and asked["command"] == "https://docs.python.org/3/"
    assert asked["prompt"] == "The agent wants to fetch a page"
    assert [c["title"] for c in asked["choices"]] == [
        "Allow",
        "Always for docs.python.org",
        "Allow for this task",
        "Deny",
    ]
    assert await approver.approve("make") == "allow_task"  # a command: no "always"
