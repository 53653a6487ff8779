"""The plan the user sees (todo_write) and text added to a running task, on the loop."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentls.agent.conversation import Conversation
from agentls.interfaces import SAID, Turn
from agentls.tools.plan_tool import ITEM_CHARS, MAX_ITEMS
from doubles import ScriptedModel, call, make_agent, results, say

PLAN = [
    {"content": "Read the tests", "status": "completed"},
    {"content": "Fix the parser", "status": "in_progress"},
    {"content": "Run the tests", "status": "pending"},
]


async def test_todo_write_shows_the_whole_plan_and_tells_the_model(tmp_path: Path) -> None:
    model = ScriptedModel(call("todo_write", todos=PLAN), say("ok"))
    agent, progress = make_agent(tmp_path, model)
    assert (await agent.run("fix it")).status == "done"
    assert ("plan", "completed: Read the tests", "in_progress: Fix the parser",
            "pending: Run the tests") in progress.events  # fmt: skip
    (told,) = results(model.requests[1])
    assert told["content"] == "Plan shown to the user: 1 of 3 completed."
    assert "is_error" not in told


async def test_bad_plans_are_refused_and_never_shown(tmp_path: Path) -> None:
    bad: list[Any] = [
        [{"content": "x", "status": "done"}],
        [{"content": "  ", "status": "pending"}],
        [{"content": "x", "status": "pending", "owner": "me"}],
        ["just text"],
        [{"content": "x", "status": "pending"}] * (MAX_ITEMS + 1),
    ]
    model = ScriptedModel(*(call("todo_write", todos=todos) for todos in bad), say("ok"))
    agent, progress = make_agent(tmp_path, model)
    await agent.run("plan")
    errors = [results(request)[0] for request in model.requests[1:]]
    assert all(error.get("is_error") for error in errors)
    assert "status must be one of: pending, in_progress, completed" in errors[0]["content"]
    assert not [event for event in progress.events if event[0] == "plan"]


async def test_plan_items_are_one_short_line_without_secrets(tmp_path: Path) -> None:
    secret = "sk-ant-secret-value-123"
    long = "step " * ITEM_CHARS
    todos = [
        {"content": f"use key {secret}\nthen go", "status": "pending"},
        {"content": long, "status": "pending"},
    ]
    model = ScriptedModel(call("todo_write", todos=todos), say("ok"))
    agent, progress = make_agent(tmp_path, model)
    agent.tools.secrets = (secret,)
    await agent.run("plan")
    (plan,) = [event for event in progress.events if event[0] == "plan"]
    assert plan[1] == "pending: use key [redacted] then go"
    assert len(plan[2]) == len("pending: ") + ITEM_CHARS and plan[2].endswith("...")


async def test_plan_tool_setting_leaves_the_tool_out(tmp_path: Path) -> None:
    model = ScriptedModel(call("todo_write", todos=PLAN), say("ok"))
    agent, _ = make_agent(tmp_path, model, plan_tool=False)
    await agent.run("plan")
    assert "todo_write" not in model.tool_names[0] and "bash" in model.tool_names[0]
    (told,) = results(model.requests[1])
    assert told["is_error"] and "unknown tool 'todo_write'" in told["content"]
    assert "todo_write" not in told["content"].split("the tools are:")[1]
    model = ScriptedModel(say("ok"))
    agent, _ = make_agent(tmp_path, model)
    await agent.run("plan")
    assert "todo_write" in model.tool_names[0]


async def test_text_added_during_a_tool_goes_with_its_results(tmp_path: Path) -> None:
    session = Conversation()

    def added_while_running(messages: list[dict[str, Any]]) -> Turn:
        session.steering.append("also update the README")
        return call("list_files")

    model = ScriptedModel(added_while_running, say("ok"))
    agent, progress = make_agent(tmp_path, model, session)
    agent.tools.secrets = ("the README",)  # what the user adds is redacted like a task
    assert (await agent.run("tidy up")).status == "done"
    last = model.requests[1][-1]["content"]
    assert last[0]["type"] == "tool_result"
    assert last[1] == {
        "type": "text",
        "text": "(The user adds, while you work on this task:)\nalso update [redacted]",
        SAID: "also update [redacted]",  # the user's own words, for a replay; never sent
    }
    assert ("steered", "also update [redacted]") in progress.events
    assert session.steering == []


async def test_text_added_as_the_model_finishes_keeps_the_task_going(tmp_path: Path) -> None:
    session = Conversation()

    def finishing(messages: list[dict[str, Any]]) -> Turn:
        session.steering.append("and add a test")
        return say("done with the fix")

    model = ScriptedModel(finishing, say("test added"))
    agent, _ = make_agent(tmp_path, model, session)
    result = await agent.run("fix it")
    assert (result.status, result.summary, result.steps) == ("done", "test added", 2)
    assert model.requests[1][-1]["content"][0]["text"].endswith("\nand add a test")
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]


async def test_text_that_missed_a_cancelled_task_is_kept_for_the_next(tmp_path: Path) -> None:
    session = Conversation()
    model = ScriptedModel(call("bash", command="sleep 30"), say("next"))
    agent, _ = make_agent(tmp_path, model, session)
    job = asyncio.ensure_future(agent.run("wait"))
    while len(model.requests) < 1:
        await asyncio.sleep(0.01)
    session.steering.append("use python instead")
    job.cancel()
    assert (await job).status == "cancelled"
    closing = [b.get("text", "") for b in session.messages[-1]["content"]]
    assert closing[-1].endswith("\nuse python instead")
    assert session.steering == []
