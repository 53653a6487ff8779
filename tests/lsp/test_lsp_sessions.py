"""Project memory, the plan and steering through the language server, against the fake API."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from editor_client import EditorClient, editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsprotocol import types
from pygls.exceptions import JsonRpcException

PLAN = [
    {"content": "Read app.py", "status": "completed"},
    {"content": "Fix the bug", "status": "in_progress"},
]


def progress_messages(client: EditorClient, token: str) -> list[str]:
    return [r.message for r in client.progress_reports[token] if getattr(r, "message", None)]


async def steer(client: EditorClient, words: str) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.steer", arguments=[{"text": words}])
    )


async def test_memory_is_in_the_cached_system_prompt(fake: FakeAnthropic, root: Path) -> None:
    config = root.parent / "config" / "agentls"  # the harness's XDG_CONFIG_HOME
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


async def test_the_plan_reaches_the_client(fake: FakeAnthropic, lsp_editor: EditorClient) -> None:
    fake.script(reply(tool_use("todo_write", {"todos": PLAN})), reply(text("ok")))
    lsp_editor.progress_reports["task-1"] = []
    assert (await lsp_editor.run_task("go", token="task-1"))["status"] == "done"
    assert lsp_editor.plans == [PLAN]
    assert "plan 1/2: Fix the bug" in progress_messages(lsp_editor, "task-1")


async def test_plan_tool_off(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("ok")))
    async with editor(root, fake.url, settings={"planTool": False}) as client:
        await client.run_task("go")
    assert "todo_write" not in [tool["name"] for tool in fake.requests[0].body["tools"]]


async def test_steering_text_reaches_the_next_request(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    # The command waits for the file the test makes once the steer is answered.
    wait = "while [ ! -e go ]; do sleep 0.02; done; echo went"
    fake.script(reply(tool_use("bash", {"command": wait})), reply(text("ok")))
    with pytest.raises(JsonRpcException, match="No task is running"):
        await steer(lsp_editor, "too early")
    lsp_editor.progress_reports["task-2"] = []
    _, answer = lsp_editor.start_task("go", token="task-2")
    while not lsp_editor.steps:
        await asyncio.sleep(0.01)
    assert await steer(lsp_editor, "also a docstring") == {"queued": True}
    (root / "go").touch()
    assert (await answer)["status"] == "done"
    assert "added to the task: also a docstring" in progress_messages(lsp_editor, "task-2")
    tool_result, added = fake.requests[1].body["messages"][-1]["content"]
    assert tool_result["content"] == "exit code 0\nwent"
    assert added["text"].endswith("\nalso a docstring")


async def test_steering_needs_text_and_a_task_not_a_compaction(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    with pytest.raises(JsonRpcException, match=r"agent\.steer takes one argument"):
        await steer(lsp_editor, "  ")

    def held_summary(body: object) -> object:
        """Answered (in the fake's thread) once the test has tried to steer."""
        while not (root / "release").exists():
            time.sleep(0.01)
        return reply(text("the summary"))

    fake.script(reply(text("hello")), held_summary)
    await lsp_editor.run_task("hi")
    compacting = asyncio.ensure_future(lsp_editor.command("agent.compact"))
    while len(fake.requests) < 2:
        await asyncio.sleep(0.01)
    with pytest.raises(JsonRpcException, match="being compacted"):
        await steer(lsp_editor, "more")
    (root / "release").touch()
    assert (await compacting)["status"] == "done"
