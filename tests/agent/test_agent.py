"""The loop with a scripted model and an in-memory editor."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentls import tools
from agentls.agent.conversation import Conversation
from agentls.interfaces import ModelError, Turn
from agentls.tools import Tool, ToolContext
from doubles import ScriptedModel, call, make_agent, results, say


async def test_tool_results_go_back_until_the_model_answers(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    model = ScriptedModel(
        call("read_file", path="a.txt"),
        lambda messages: (
            call("edit_file", path="a.txt", old_text="hello", new_text="bye")
            if results(messages)[0]["content"] == "1\thello"
            else say("wrong")
        ),
        call("bash", command="cat a.txt"),
        lambda messages: say(f"saw: {results(messages)[0]['content']}"),
    )
    agent, progress = make_agent(tmp_path, model)
    result = await agent.run("change it")
    assert result.status == "done"
    assert result.summary == "saw: exit code 0\nbye"
    assert (result.steps, result.edits_applied, result.edits_rejected) == (4, 1, 0)
    assert result.usage.input == 40 and result.usage.output == 20
    assert [e for e in progress.events if e[0] == "step"] == [
        ("step", "read_file", "a.txt"),
        ("step", "edit_file", "a.txt"),
        ("step", "bash", "cat a.txt"),
    ]


async def test_an_optional_tool_is_offered_only_when_the_front_end_serves_it(
    tmp_path: Path,
) -> None:
    async def look(context: ToolContext, arguments: dict[str, object], _: object) -> str:
        return "seen"

    optional = Tool(
        name="look",
        description="Look.",
        properties={},
        required=(),
        handler=look,
        summary_field="path",
        optional=True,
    )
    table = {**tools.TOOLS, "look": optional}
    core = ["bash", "read_file", "write_file", "edit_file", "list_files", "grep", "todo_write"]
    core.append("web_fetch")

    model = ScriptedModel(call("look"), say("ok"))
    agent, _ = make_agent(tmp_path, model, table=table)
    await agent.run("look")
    assert model.tool_names[0] == core
    assert results(model.requests[1])[0]["is_error"]  # not offered, so not run

    model = ScriptedModel(call("look"), say("ok"))
    agent, _ = make_agent(tmp_path, model, extra_tools=frozenset({"look"}), table=table)
    await agent.run("look")
    assert model.tool_names[0] == [*core, "look"]
    assert results(model.requests[1])[0]["content"] == "seen"


async def test_errors_are_observations_and_the_loop_goes_on(tmp_path: Path) -> None:
    model = ScriptedModel(
        call("no_such_tool", x=1),
        call("read_file", path="../../etc/passwd"),
        lambda messages: say("ok" if results(messages)[0].get("is_error") else "no error?"),
    )
    agent, _ = make_agent(tmp_path, model)
    result = await agent.run("try")
    assert (result.status, result.summary) == ("done", "ok")
    first = results(model.requests[1])[0]
    assert first["is_error"] and "unknown tool" in first["content"]


async def test_step_limit(tmp_path: Path) -> None:
    model = ScriptedModel(*[call("list_files") for _ in range(5)])
    agent, _ = make_agent(tmp_path, model, max_steps=3)
    result = await agent.run("loop forever")
    assert (result.status, result.steps) == ("step_limit", 3)


async def test_model_error_fails_the_task_and_keeps_the_session_valid(tmp_path: Path) -> None:
    session = Conversation()
    agent, _ = make_agent(
        tmp_path, ScriptedModel(call("list_files"), ModelError("down", "retry")), session
    )
    result = await agent.run("first")
    assert (result.status, result.summary, result.error_hint) == ("failed", "down", "retry")
    model = ScriptedModel(say("fine"))
    agent, _ = make_agent(tmp_path, model, session)
    assert (await agent.run("second")).status == "done"
    roles = [m["role"] for m in model.requests[0]]
    assert roles == ["user", "assistant", "user"]
    blocks = model.requests[0][-1]["content"]
    assert [b["type"] for b in blocks] == ["tool_result", "text", "text"]
    assert blocks[1]["text"] == "(This task stopped: down)" and blocks[2]["text"] == "second"


async def test_sessions_carry_the_conversation(tmp_path: Path) -> None:
    session = Conversation()
    agent, _ = make_agent(tmp_path, ScriptedModel(say("one")), session)
    await agent.run("first task")
    model = ScriptedModel(say("two"))
    agent, _ = make_agent(tmp_path, model, session)
    await agent.run("second task")
    texts = [b.get("text") for m in model.requests[0] for b in m["content"]]
    assert texts == ["first task", "one", "second task"]


async def test_cancel_during_a_tool_answers_every_call(tmp_path: Path) -> None:
    session = Conversation()
    two_calls = Turn(
        [
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "sleep 30"}},
            {"type": "tool_use", "id": "t2", "name": "list_files", "input": {}},
        ],
        "tool_use",
    )
    agent, progress = make_agent(tmp_path, ScriptedModel(two_calls), session)
    job = asyncio.ensure_future(agent.run("slow"))
    while ("step", "bash", "sleep 30") not in progress.events:
        await asyncio.sleep(0.01)
    job.cancel()
    result = await job
    assert result.status == "cancelled"
    answers, note = session.messages[-1]["content"][:2], session.messages[-1]["content"][2]
    assert [(b["tool_use_id"], b["is_error"]) for b in answers] == [("t1", True), ("t2", True)]
    assert "cancelled this task" in note["text"]


async def test_a_task_cancelled_before_any_answer_is_marked_for_the_next(tmp_path: Path) -> None:
    session = Conversation()
    agent, _ = make_agent(tmp_path, ScriptedModel(), session)
    agent.model.respond = _never  # type: ignore[method-assign]
    job = asyncio.ensure_future(agent.run("delete every test file"))
    await asyncio.sleep(0.05)
    job.cancel()
    assert (await job).status == "cancelled"
    model = ScriptedModel(say("ok"))
    agent, _ = make_agent(tmp_path, model, session)
    await agent.run("add a docstring")
    texts = [b["text"] for b in model.requests[0][0]["content"]]
    assert texts == [
        "delete every test file",
        "(The user cancelled this task; do not go on with it unless asked.)",
        "add a docstring",
    ]


async def _never(*arguments: object, **asked: object) -> Turn:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


async def test_a_refused_task_leaves_no_trace_in_the_session(tmp_path: Path) -> None:
    session = Conversation()
    agent, _ = make_agent(tmp_path, ScriptedModel(say("first")), session)
    await agent.run("first task")
    agent, _ = make_agent(
        tmp_path, ScriptedModel(Turn([{"type": "text", "text": "I can't"}], "refusal")), session
    )
    assert (await agent.run("bad task")).status == "failed"
    model = ScriptedModel(say("fine"))
    agent, _ = make_agent(tmp_path, model, session)
    await agent.run("next task")
    texts = [b["text"] for m in model.requests[0] for b in m["content"]]
    assert texts == ["first task", "first", "next task"]


async def test_max_tokens_continues_and_incomplete_calls_are_not_run(tmp_path: Path) -> None:
    cut = Turn([{"type": "text", "text": "partial"}], "max_tokens")
    model = ScriptedModel(
        cut, call("write_file", "max_tokens", path="x", content="half"), say("done")
    )
    agent, _ = make_agent(tmp_path, model)
    result = await agent.run("long")
    assert result.status == "done"
    assert "cut off" in model.requests[1][-1]["content"][0]["text"]
    assert "Not run" in results(model.requests[2])[0]["content"]
    assert not (tmp_path / "x").exists()


async def test_refusal_fails_the_task(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, ScriptedModel(Turn([], "refusal")))
    result = await agent.run("bad")
    assert result.status == "failed" and "declined" in result.summary


async def test_whitespace_inputs_are_summarised_without_crashing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a b\n")
    model = ScriptedModel(call("grep", pattern=" "), call("bash", command="\n"), say("ok"))
    agent, progress = make_agent(tmp_path, model)
    result = await agent.run("search spaces")
    assert result.status == "done"
    assert ("step", "grep", "") in progress.events
    assert results(model.requests[1])[0]["content"] == "a.txt:1: a b"


async def test_a_defect_fails_the_task_and_keeps_the_session_usable(tmp_path: Path) -> None:
    session = Conversation()
    agent, progress = make_agent(tmp_path, ScriptedModel(call("list_files")), session)

    def broken(tool: str, summary: str) -> None:
        raise RuntimeError("progress sink broke")

    progress.step = broken  # type: ignore[method-assign]
    result = await agent.run("first")
    assert result.status == "failed" and "progress sink broke" in result.summary
    model = ScriptedModel(say("fine"))
    agent, _ = make_agent(tmp_path, model, session)
    assert (await agent.run("second")).status == "done"
    (answer,) = [b for b in model.requests[0][-1]["content"] if b["type"] == "tool_result"]
    assert answer["is_error"]


async def test_a_compaction_that_breaks_leaves_no_request_behind(tmp_path: Path) -> None:
    session = Conversation()
    agent, _ = make_agent(tmp_path, ScriptedModel(say("hello"), RuntimeError("a defect")), session)
    await agent.run("hi")
    before = [dict(m, content=list(m["content"])) for m in session.messages]
    with pytest.raises(RuntimeError):
        await agent.compact()
    assert session.messages == before


async def test_a_secret_in_the_task_or_its_selection_never_reaches_the_model(
    tmp_path: Path,
) -> None:
    """The editor sends the selection with the task: a selected .env line holds a key."""
    model = ScriptedModel(say("ok"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.secrets = ("sk-ant-selected-0123456789",)
    task = "Selected lines 1-1:\n```\nANTHROPIC_API_KEY=sk-ant-selected-0123456789\n```\nfix"
    assert (await agent.run(task)).status == "done"
    sent = model.requests[0][0]["content"][0]["text"]
    assert sent == "Selected lines 1-1:\n```\nANTHROPIC_API_KEY=[redacted]\n```\nfix"


async def test_a_step_s_detail_is_for_the_user_not_the_model(tmp_path: Path) -> None:
    # Every front end shows the detail: the advice to the model after its first sentence
    # ("Do not retry it; ...") is not for the user, and neither is a dangling "Rejected:".
    model = ScriptedModel(call("bash", command="touch x"), say("ok"))
    agent, progress = make_agent(tmp_path, model, approve_commands="ask")
    await agent.run("make x")
    assert progress.details == ["The user denied this command."]
