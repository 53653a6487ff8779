"""Project memory, the plan and steering through the language server, against the fake API."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fake_api import FakeAnthropic, reply, text, tool_use
from lsp_in_process import InProcessEditor

PLAN = [
    {"content": "Read app.py", "status": "completed"},
    {"content": "Fix the bug", "status": "in_progress"},
]


@pytest.fixture(autouse=True)
def _environment(fake: FakeAnthropic, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root.parent / "config"))


async def test_memory_is_in_the_cached_system_prompt(fake: FakeAnthropic, root: Path) -> None:
    config = root.parent / "config" / "agentls"
    config.mkdir(parents=True)
    (config / "AGENTS.md").write_text("Answer in French.\n")
    (root / "AGENTS.md").write_text("Run tests with `make check`. KEY=test-key-123\n")
    fake.script(reply(tool_use("list_files", {})), reply(text("ok")))
    editor = await InProcessEditor(root).start()
    answer = await editor.answer(editor.command("agent.runTask", {"task": "go"}))
    assert answer["result"]["usage"]["cacheReadTokens"] > 0  # step 2 read step 1's prefix
    first, second = (request.body for request in fake.requests)
    (system,) = first["system"]
    assert system["cache_control"] == {"type": "ephemeral"}
    assert system["text"].index("Answer in French.") < system["text"].index("make check")
    assert "KEY=[redacted]" in system["text"]
    assert second["system"] == first["system"] and second["tools"] == first["tools"]
    marked = [m for m in second["messages"] if "cache_control" in m["content"][-1]]
    assert len(marked) == 2


async def test_the_plan_reaches_the_client(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(tool_use("todo_write", {"todos": PLAN})), reply(text("ok")))
    editor = await InProcessEditor(root).start()
    answer = await editor.answer(editor.command("agent.runTask", {"task": "go"}, "task-1"))
    assert answer["result"]["status"] == "done"
    assert editor.notifications("agent/plan") == [{"token": "task-1", "items": PLAN}]
    assert "plan 1/2: Fix the bug" in editor.progress_messages("task-1")


async def test_plan_tool_off(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("ok")))
    editor = await InProcessEditor(root, {"planTool": False}).start()
    await editor.answer(editor.command("agent.runTask", {"task": "go"}))
    assert "todo_write" not in [tool["name"] for tool in fake.requests[0].body["tools"]]


async def test_steering_text_reaches_the_next_request(fake: FakeAnthropic, root: Path) -> None:
    # The command waits for the file the test makes once the steer is answered.
    wait = "while [ ! -e go ]; do sleep 0.02; done; echo went"
    fake.script(reply(tool_use("bash", {"command": wait})), reply(text("ok")))
    editor = await InProcessEditor(root).start()
    early = await editor.answer(editor.command("agent.steer", {"text": "too early"}))
    assert early["error"]["message"] == "No task is running; start one with agent.runTask."
    task = editor.command("agent.runTask", {"task": "go"}, "task-2")
    while not editor.notifications("agent/step"):
        await asyncio.sleep(0.01)
    steered = await editor.answer(editor.command("agent.steer", {"text": "also a docstring"}))
    assert steered["result"] == {"queued": True}
    (root / "go").touch()
    assert (await editor.answer(task))["result"]["status"] == "done"
    assert "added to the task: also a docstring" in editor.progress_messages("task-2")
    tool_result, added = fake.requests[1].body["messages"][-1]["content"]
    assert tool_result["content"] == "exit code 0\nwent"
    assert added["text"].endswith("\nalso a docstring")


async def test_steering_needs_text_and_a_task_not_a_compaction(
    fake: FakeAnthropic, root: Path
) -> None:
    editor = await InProcessEditor(root).start()
    bad = await editor.answer(editor.command("agent.steer", {"text": "  "}))
    assert bad["error"]["code"] == -32602
    fake.script(reply(text("hello")), lambda body: _hold(root, body))
    await editor.answer(editor.command("agent.runTask", {"task": "hi"}))
    compacting = editor.command("agent.compact", {})
    while len(fake.requests) < 2:
        await asyncio.sleep(0.01)
    refused = await editor.answer(editor.command("agent.steer", {"text": "more"}))
    assert "being compacted" in refused["error"]["message"]
    (root / "release").touch()
    assert (await editor.answer(compacting))["result"]["status"] == "done"


def _hold(root: Path, body: object) -> object:
    """The fake's answer waits (in its own thread) until the test releases it."""
    import time

    while not (root / "release").exists():
        time.sleep(0.01)
    return reply(text("the summary"))
