"""Project memory, the plan and steering through the real server, against the fake API."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsprotocol import types
from pygls.exceptions import JsonRpcException

PLAN = [
    {"content": "Read app.py", "status": "completed"},
    {"content": "Fix the bug", "status": "in_progress"},
]


async def test_memory_is_in_the_cached_system_prompt(fake: FakeAnthropic, root: Path) -> None:
    config = root.parent / "config" / "agentls"  # the editor harness's XDG_CONFIG_HOME
    config.mkdir(parents=True)
    (config / "AGENTS.md").write_text("Answer in French.\n")
    (root / "AGENTS.md").write_text("Run tests with `make check`. KEY=test-key-123\n")
    fake.script(reply(tool_use("list_files", {})), reply(text("ok")))
    async with editor(root, fake.url) as client:
        result = await client.run_task("go")
    assert result["usage"]["cacheReadTokens"] > 0  # the second step read the first's prefix
    first, second = (request.body for request in fake.requests)
    (system,) = first["system"]
    assert system["cache_control"] == {"type": "ephemeral"}
    assert system["text"].index("Answer in French.") < system["text"].index("make check")
    assert "KEY=[redacted]" in system["text"]  # the harness's API key
    assert second["system"] == first["system"] and second["tools"] == first["tools"]
    marked = [m for m in second["messages"] if "cache_control" in m["content"][-1]]
    assert len(marked) == 2


async def test_the_plan_reaches_the_client(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(tool_use("todo_write", {"todos": PLAN})), reply(text("ok")))
    async with editor(root, fake.url) as client:
        assert (await client.run_task("go", token="task-1"))["status"] == "done"
        assert client.plans == [PLAN]
        messages = [getattr(r, "message", None) for r in client.progress_reports["task-1"]]
        assert "plan 1/2: Fix the bug" in messages


async def test_plan_tool_off(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("ok")))
    async with editor(root, fake.url, settings={"planTool": False}) as client:
        await client.run_task("go")
    assert "todo_write" not in [tool["name"] for tool in fake.requests[0].body["tools"]]


async def test_steering_text_reaches_the_next_request(fake: FakeAnthropic, root: Path) -> None:
    # The command waits for the file the test makes once the steer is answered.
    wait = "while [ ! -e go ]; do sleep 0.02; done; echo went"
    fake.script(reply(tool_use("bash", {"command": wait})), reply(text("ok")))
    async with editor(root, fake.url) as client:
        with pytest.raises(JsonRpcException, match="No task is running"):
            await steer(client, "too early")
        _, answer = client.start_task("go", token="task-2")
        while not [s for s in client.steps if s["state"] == "started"]:
            await asyncio.sleep(0.02)
        assert await steer(client, "also add a docstring") == {"queued": True}
        (root / "go").touch()
        assert (await answer)["status"] == "done"
        reports = [getattr(r, "message", None) for r in client.progress_reports["task-2"]]
        assert "added to the task: also add a docstring" in reports
    tool_result, added = fake.requests[1].body["messages"][-1]["content"]
    assert tool_result["content"] == "exit code 0\nwent"
    assert added["text"].endswith("\nalso add a docstring")


async def steer(client: object, words: str) -> object:
    return await client.workspace_execute_command_async(  # type: ignore[attr-defined]
        types.ExecuteCommandParams(command="agent.steer", arguments=[{"text": words}])
    )
