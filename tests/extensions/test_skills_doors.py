"""`/name args` through the LSP door (agent.runTask, agent.commands) and the ACP door
(available_commands_update, in process against a client double), on the fake API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from acp.schema import AllowedOutcome, AvailableCommandsUpdate, TextContentBlock
from agentls.acp.agent import AcpAgent
from editor_client import editor
from fake_api import FakeAnthropic, reply, text


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    commands = folder / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix.md").write_text(
        "---\ndescription: Fix an issue\nargument-hint: ISSUE\n---\nFix issue #$ARGUMENTS.\n"
    )
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return folder


def _project_skill(root: Path) -> None:
    folder = root / ".agents" / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\ndescription: Deploy it.\n---\nDEPLOY BODY\n")


async def test_agent_run_task_runs_slash_name_and_lists_the_commands(
    root: Path, fake: FakeAnthropic
) -> None:
    _project_skill(root)
    fake.script(reply(text("ok")), reply(text("ok")))
    async with editor(root, fake.url) as client:
        before = await client.command("agent.commands")
        client.approvals = ["Allow (remembered)"]  # the project's skills: asked by approve_project
        result = await client.run_task("/fix 7")
        after = await client.command("agent.commands")
        await client.run_task("/deploy now")
    assert result["status"] == "done"
    assert before == [{"name": "fix", "description": "Fix an issue", "hint": "ISSUE"}]
    assert [command["name"] for command in after] == ["deploy", "fix"]
    assert "skills deploy" in client.approval_requests[0]
    assert "Fix issue #7." in json.dumps(fake.requests[0].body["messages"][-1])
    assert "DEPLOY BODY" in json.dumps(fake.requests[1].body["messages"][-1])


class _Client:
    """An ACP client that allows what it is asked and keeps every update."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: Any) -> Any:
        return SimpleNamespace(outcome=AllowedOutcome(option_id="allow", outcome="selected"))

    def commands(self) -> list[list[str]]:
        return [
            [command.name for command in update.available_commands]
            for update in self.updates
            if isinstance(update, AvailableCommandsUpdate)
        ]


async def test_acp_sends_the_commands_and_runs_one(
    root: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    _project_skill(root)
    fake.script(reply(text("ok")))
    agent, client = AcpAgent(), _Client()
    agent.on_connect(client)
    await agent.initialize(protocol_version=1)
    session = await agent.new_session(cwd=str(root))
    await asyncio.sleep(0.05)
    assert client.commands() == [["fix"]]  # the project's skill waits for approval
    hinted = next(u for u in client.updates if isinstance(u, AvailableCommandsUpdate))
    assert hinted.available_commands[0].input.root.hint == "ISSUE"
    prompt = [TextContentBlock(type="text", text="/fix 9")]
    answer = await agent.prompt(session_id=session.session_id, prompt=prompt)
    assert answer.stop_reason == "end_turn"
    assert "Fix issue #9." in json.dumps(fake.requests[0].body["messages"][-1])
    assert client.commands() == [["fix"], ["deploy", "fix"]]  # approved during the prompt
