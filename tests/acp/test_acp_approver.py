"""The ACP approver in process, against a client double: what needs no Node."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from acp.schema import AllowedOutcome
from agentls.acp.approver import AcpApprover


class _OneAtATime:
    """A client that takes a while to answer, and counts the questions open at once."""

    def __init__(self) -> None:
        self.open = self.most = 0
        self.titles: list[str] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: Any) -> Any:
        self.open += 1
        self.most = max(self.most, self.open)
        self.titles.append(tool_call.title)
        await asyncio.sleep(0.05)
        self.open -= 1
        return SimpleNamespace(outcome=AllowedOutcome(option_id="allow", outcome="selected"))


class _NothingQueued:
    async def flush(self) -> None:
        return None


async def test_questions_are_put_one_at_a_time() -> None:
    """L2: the read-only calls of a turn run together; their questions must not."""
    client = _OneAtATime()
    progress = SimpleNamespace(current=None, updates=_NothingQueued())
    approver = AcpApprover(client, "s", progress, SimpleNamespace())  # type: ignore[arg-type]
    answers = await asyncio.gather(
        approver.approve("read_file a.txt"),
        approver.approve("read_file b.txt"),
        approver.approve_project("start the project's MCP server x (x)"),
    )
    assert answers == ["allow", "allow", True]
    assert client.most == 1 and len(client.titles) == 3
