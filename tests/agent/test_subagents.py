"""Subagents: the `agent` tool runs a new conversation on the same loop, with the task's
guards, its own tools and budget; a turn's agent calls run at once, answered in order."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from agentls.agent.subagents import delegate
from agentls.interfaces import Turn, Usage
from agentls.permissions.modes import SessionMode
from agentls.permissions.rules import parse_rules
from doubles import make_agent, results

Answer = Turn | Callable[[list[dict[str, Any]]], Awaitable[Turn] | Turn]


class Routed:
    """A model whose next answer depends on who asks: each conversation is known by the
    first words of its first message (the task's, or the prompt given to a subagent)."""

    def __init__(self, **scripts: list[Answer]) -> None:
        self.scripts = {key.replace("_", " "): answers for key, answers in scripts.items()}
        self.requests: list[dict[str, Any]] = []
        self.name = "claude-sonnet-5-5"

    async def respond(self, system, messages, tools, on_text, **asked) -> Turn:  # type: ignore[no-untyped-def]
        first = messages[0]["content"][0]["text"]
        who = next(key for key in self.scripts if first.startswith(key))
        self.requests.append(
            {
                "who": who,
                "system": system,
                "messages": [dict(m, content=list(m["content"])) for m in messages],
                "tools": [tool["name"] for tool in tools],
                "schemas": {tool["name"]: tool for tool in tools},
            }
        )
        answer = self.scripts[who].pop(0)
        turn = answer(messages) if callable(answer) else answer
        if asyncio.iscoroutine(turn):
            turn = await turn
        for block in turn.content:
            if block["type"] == "text":
                on_text(block["text"])
        return turn


_ids = iter(range(1, 10**9))


def calls(*named: tuple[str, dict[str, Any]]) -> Turn:
    blocks = [
        {"type": "tool_use", "id": f"c{next(_ids)}", "name": name, "input": arguments}
        for name, arguments in named
    ]
    return Turn(blocks, "tool_use", Usage(100, 10))


def say(text: str, usage: Usage | None = None) -> Turn:
    return Turn([{"type": "text", "text": text}], "end_turn", usage or Usage(100, 10))


def explore(description: str, prompt: str) -> tuple[str, dict[str, Any]]:
    return "agent", {"description": description, "prompt": prompt, "subagent_type": "Explore"}


class Meeting:
    """Each of `names` waits here until all of them arrived: were they one after another, the
    first would wait for ever."""

    def __init__(self, *names: str) -> None:
        self.names, self.arrived, self.all_there = set(names), set[str](), asyncio.Event()

    async def meet(self, name: str, turn: Turn) -> Turn:
        self.arrived.add(name)
        if self.arrived == self.names:
            self.all_there.set()
        await self.all_there.wait()
        return turn


def agent_on(tmp_path: Path, model: Routed, **settings: Any) -> Any:
    agent, progress = make_agent(tmp_path, model, **settings)  # type: ignore[arg-type]
    delegate(agent)
    return agent, progress


async def test_two_explorers_of_one_turn_overlap_read_only_and_answer_in_order(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("def alpha(): pass\n")
    meeting = Meeting("A", "B")
    model = Routed(
        fix=[
            say("Let me look."),  # replaced below: the task's first turn
            lambda messages: say("both found"),
        ],
        find_alpha=[
            lambda m: meeting.meet("A", calls(("read_file", {"path": "a.py"}))),
            say("alpha is at a.py:1"),
        ],
        find_beta=[lambda m: meeting.meet("B", say("no beta anywhere"))],
    )
    model.scripts["fix"][0] = calls(
        explore("look for alpha", "find alpha"), explore("look for beta", "find beta")
    )
    agent, _ = agent_on(tmp_path, model)
    result = await asyncio.wait_for(agent.run("fix the parser"), 30)
    assert result.status == "done" and result.summary == "both found"
    answers = results(model.requests[-1]["messages"])
    assert answers[0]["content"].startswith("alpha is at a.py:1\n\n[Explore agent-")
    assert answers[1]["content"].startswith("no beta anywhere\n\n[Explore agent-")
    assert "done · 2 steps · 220 tokens" in answers[0]["content"]
    subagent_requests = [r for r in model.requests if r["who"] != "fix"]
    for request in subagent_requests:
        assert "fix the parser" not in str(request["messages"])
        assert "read-only explorer" in request["system"]
        assert set(request["tools"]) <= {"read_file", "list_files", "grep", "web_fetch"}
        assert "read_file" in request["tools"]
    assert "agent" in model.requests[0]["tools"]
    assert len(result.subagents) == 2


async def test_a_deny_rule_holds_inside_a_subagent(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KEY=1\n")
    model = Routed(
        fix=[calls(explore("read env", "peek at .env")), say("ok")],
        peek=[calls(("read_file", {"path": ".env"})), say("could not")],
    )
    rules = parse_rules({"deny": ["Read(.env)"]})
    agent, _ = agent_on(tmp_path, model, permissions=rules)
    await asyncio.wait_for(agent.run("fix it"), 30)
    peek = [r for r in model.requests if r["who"] == "peek"]
    denied = results(peek[-1]["messages"])[0]
    assert denied.get("is_error") and "Denied by the permission rule" in denied["content"]


async def test_plan_mode_subagents_are_read_only(tmp_path: Path) -> None:
    model = Routed(
        fix=[calls(("agent", {"description": "do it", "prompt": "change things"})), say("ok")],
        change=[say("cannot")],
    )
    agent, _ = agent_on(tmp_path, model)
    agent.tools.mode = SessionMode("plan")
    await asyncio.wait_for(agent.run("fix it"), 30)
    assert "agent" in model.requests[0]["tools"]
    (child,) = [r for r in model.requests if r["who"] == "change"]
    assert "edit_file" not in child["tools"] and "bash" not in child["tools"]
    assert "read_file" in child["tools"] and "exit_plan_mode" not in child["tools"]


async def test_a_subagents_edit_is_reviewed_and_told(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    edit = {"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"}
    model = Routed(
        fix=[calls(("agent", {"description": "edit it", "prompt": "change x"})), say("ok")],
        change=[calls(("edit_file", edit)), say("changed x")],
    )
    agent, _ = agent_on(tmp_path, model)
    result = await asyncio.wait_for(agent.run("fix it"), 30)
    assert agent.tools.workspace.proposals[0].path == tmp_path / "app.py"
    child = [r for r in model.requests if r["who"] == "change"]
    told = results(child[-1]["messages"])[0]["content"]
    assert "app.py" in told and not results(child[-1]["messages"])[0].get("is_error")
    assert (tmp_path / "app.py").read_text() == "x = 2\n"
    assert result.edits_applied == 1


async def test_cancel_ends_every_running_subagent(tmp_path: Path) -> None:
    started: list[str] = []
    forever = asyncio.Event()

    async def hang(name: str) -> Turn:
        started.append(name)
        await forever.wait()
        return say("never")

    model = Routed(
        fix=[calls(explore("one", "first question"), explore("two", "second question"))],
        first=[lambda m: hang("first")],
        second=[lambda m: hang("second")],
    )
    agent, progress = agent_on(tmp_path, model)
    task = asyncio.ensure_future(agent.run("fix it"))
    while len(started) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    result = await asyncio.wait_for(task, 30)
    assert result.status == "cancelled"
    finished = [e for e in progress.events if e[1:2] == ("finished",)]
    assert sorted(e[0] for e in finished) == ["agent-1", "agent-2"]
    assert all(e[2] == "error" for e in finished)
    assert [s.status for s in result.subagents] == ["cancelled", "cancelled"]


@pytest.mark.parametrize("limit", ["maxSteps", "maxTokens"])
async def test_a_subagent_stops_at_its_limit_and_returns_what_it_has(
    tmp_path: Path, limit: str
) -> None:
    from agentls.settings.assembly import checked

    (tmp_path / "a.py").write_text("a\n")

    def reading(messages: list[dict[str, Any]]) -> Turn:
        turn = calls(("read_file", {"path": "a.py"}))
        turn.content.insert(0, {"type": "text", "text": f"still looking ({len(messages)})"})
        turn.usage = Usage(600, 10)
        return turn

    model = Routed(fix=[calls(explore("look", "look around")), say("ok")], look=[reading] * 10)
    bounds = {"maxSteps": 3} if limit == "maxSteps" else {"maxTokens": 1000}
    agent, _ = agent_on(tmp_path, model, subagents=checked("subagents", bounds))
    await asyncio.wait_for(agent.run("fix it"), 30)
    looked = [r for r in model.requests if r["who"] == "look"]
    assert len(looked) == (3 if limit == "maxSteps" else 2)
    answer = results(model.requests[-1]["messages"])[0]["content"]
    assert answer.startswith(f"still looking ({2 * len(looked) - 1})")
    assert "cut short" in answer and f"subagents.{limit}" in answer
    assert not results(model.requests[-1]["messages"])[0].get("is_error")


async def test_the_task_limit_counts_its_subagents_steps(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a\n")
    model = Routed(
        fix=[calls(explore("look", "look around")), say("ok")],
        look=[calls(("read_file", {"path": "a.py"}))] * 10,
    )
    agent, _ = agent_on(tmp_path, model, max_steps=4)
    result = await asyncio.wait_for(agent.run("fix it"), 30)
    assert len([r for r in model.requests if r["who"] == "look"]) == 3
    assert result.status == "step_limit"


async def test_usage_adds_up(tmp_path: Path) -> None:
    model = Routed(
        fix=[calls(explore("one", "first question"), explore("two", "second question")), say("ok")],
        first=[say("1", Usage(1000, 50, 300, 7))],
        second=[say("2", Usage(2000, 60, 400, 9))],
    )
    agent, _ = agent_on(tmp_path, model)
    result = await asyncio.wait_for(agent.run("fix it"), 30)
    assert sorted(s.id for s in result.subagents) == ["agent-1", "agent-2"]
    own = Usage(200, 20)
    total = Usage()
    for part in (own, *(s.usage for s in result.subagents)):
        total.add(part)
    assert result.usage == total == Usage(3200, 130, 700, 16)


async def test_a_subagents_changes_are_undone_with_the_task(tmp_path: Path) -> None:
    from agentls.history.checkpoints import ShadowRepository, WorkspaceCheckpoints
    from agentls.history.undo import undo
    from doubles import MemoryEditor

    root = tmp_path / "root"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    # A change of another size: one of the same size within the same instant is git's racy
    # case, which the checkpoints' own tests cover.
    edit = {"path": "app.py", "old_text": "x = 1", "new_text": "x = 20"}
    model = Routed(
        fix=[calls(("agent", {"description": "edit it", "prompt": "change x"})), say("ok")],
        change=[calls(("edit_file", edit)), say("changed")],
    )
    repository = ShadowRepository(root, tmp_path / "shadow")
    agent, _ = agent_on(root, model)
    agent.checkpoints = WorkspaceCheckpoints(repository)
    await asyncio.wait_for(agent.run("fix it"), 30)
    assert (root / "app.py").read_text() == "x = 20\n"
    steps = [(c.kind, c.step, c.label) for c in repository.checkpoints() if c.kind == "step"]
    assert steps == [("step", 1, "agent: edit it")]  # the subagent's edit: its parent's step
    result = await undo(repository, MemoryEditor(root), None, (), agent.conversation.id, 1)
    assert (root / "app.py").read_text() == "x = 1\n" and result.restored == ["app.py"]


async def test_subagent_hooks_start_and_stop_with_claude_codes_payloads(tmp_path: Path) -> None:
    from agentls.extensions.hooks import Hooks, parse_hooks
    from agentls.extensions.programs import Programs

    seen = tmp_path / "seen.jsonl"
    context = '{"hookSpecificOutput": {"additionalContext": "mind the tests"}}'
    hooks = parse_hooks(
        {
            "SubagentStart": [
                {
                    "matcher": "Explore",
                    "hooks": [{"command": f"cat >> {seen}; echo >> {seen}; echo '{context}'"}],
                }
            ],
            "SubagentStop": [{"hooks": [{"command": f"cat >> {seen}; echo >> {seen}"}]}],
        }
    )
    model = Routed(fix=[calls(explore("look", "look around")), say("ok")], look=[say("found")])
    agent, _ = agent_on(tmp_path, model)
    agent.tools.hooks = Hooks(hooks, Programs(tmp_path, "auto", False), lambda: "s1", print)
    await asyncio.wait_for(agent.run("fix it"), 30)
    import json

    start, stop = [json.loads(line) for line in seen.read_text().splitlines() if line]
    assert start["hook_event_name"] == "SubagentStart" and start["agent_type"] == "Explore"
    assert stop["hook_event_name"] == "SubagentStop" and stop["agent_id"] == start["agent_id"]
    assert stop["stop_hook_active"] is False and stop["session_id"] == "s1"
    (looked,) = [r for r in model.requests if r["who"] == "look"]
    assert "mind the tests" in looked["messages"][0]["content"][0]["text"]


async def test_the_outcome_and_usage_json_show_the_subagents_share(tmp_path: Path) -> None:
    from agentls.agent.task_json import task_json
    from agentls.models.costs import price_of
    from agentls.wiring import outcome

    model = Routed(
        fix=[calls(explore("one", "first question"), explore("two", "second question")), say("ok")],
        first=[say("1", Usage(10_000, 500, 8_000, 0))],
        second=[say("2", Usage(12_000, 600, 9_000, 0))],
    )
    agent, _ = agent_on(tmp_path, model)
    result = await asyncio.wait_for(agent.run("fix it"), 30)
    price = price_of("claude-sonnet-5-5")
    line = outcome(result, price)
    assert line.startswith("done · 2 steps · 0 edits · 2 subagents 40.1k tokens · 40.3k tokens (")
    answer = task_json(result, line, "claude-sonnet-5-5", price)
    usage = answer["usage"]
    parts = usage["subagents"]
    assert sorted(p["id"] for p in parts) == ["agent-1", "agent-2"]
    assert all(p["type"] == "Explore" and p["status"] == "done" for p in parts)
    for key in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"):
        assert usage[key] == sum(p[key] for p in parts) + {
            "inputTokens": 200,
            "outputTokens": 20,
        }.get(key, 0)
    assert usage["costUsd"] == pytest.approx(
        sum(p["costUsd"] for p in parts) + price.cost(Usage(200, 20)), abs=1e-6
    )
