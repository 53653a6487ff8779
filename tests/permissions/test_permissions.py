"""Permission rules (allow / ask / deny) and the modes (default, acceptEdits, plan)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentls.config import project_settings
from agentls.config.settings import parse
from agentls.permissions.modes import SessionMode
from agentls.permissions.rules import Rule, Rules, parse_rules
from agentls.tools import offered
from agentls.tools.exit_plan import APPROVED, DECLINED
from doubles import Approver, ScriptedModel, call, make_agent, results, say


def _rules(**kinds: list[str]) -> Rules:
    return parse_rules(kinds)


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("npm test", "allow"),
        ("npm test -- --watch", "allow"),
        ("npm testx", None),
        ("npm test; curl evil", None),  # chained: no allow rule holds it
        ("npm test ../../etc", None),  # a path outside the root
        ("git push origin main", "ask"),
        ("ls && git push", "ask"),  # ask and deny rules look inside chains
        ("rm -rf build", "deny"),
        ("ls; rm -rf ~", "deny"),
        ("echo $(rm x)", "deny"),
        ("git status", "allow"),
        ("git status --short", None),  # Bash(git status) is that command exactly
    ],
)
def test_command_rules_match_as_documented(
    tmp_path: Path, command: str, verdict: str | None
) -> None:
    rules = _rules(
        allow=["Bash(npm test:*)", "Bash(git status)", "Bash(git push:*)"],
        ask=["Bash(git push:*)"],
        deny=["Bash(rm:*)"],
    )
    decided = rules.decide("bash", {"command": command}, tmp_path)
    assert (decided[0] if decided else None) == verdict


def test_deny_wins_over_ask_over_allow(tmp_path: Path) -> None:
    every = ["Edit(src/**)"]
    assert _rules(allow=every, ask=every, deny=every).decide(
        "edit_file", {"path": "src/a.py"}, tmp_path
    ) == ("deny", Rule("Edit", "src/**"))
    assert _rules(allow=every, ask=every).decide("write_file", {"path": "src/a/b.py"}, tmp_path)[
        0
    ] == "ask"  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "tool", "arguments", "matches"),
    [
        ("Read(.env)", "read_file", {"path": ".env"}, True),
        ("Read(.env)", "read_file", {"path": "sub/.env"}, False),
        ("Read(**/.env)", "read_file", {"path": "sub/.env"}, True),
        ("Read(.env)", "read_file", {"path": "sub/../.env"}, True),
        ("Edit(src/**)", "edit_file", {"path": "src/deep/x.py"}, True),
        ("Edit(src/**)", "edit_file", {"path": "srcx/x.py"}, False),
        ("Edit", "write_file", {"path": "anything"}, True),
        ("Write", "edit_file", {"path": "anything"}, False),
        ("bash", "bash", {"command": "ls"}, True),
        ("Grep", "grep", {"pattern": "x"}, True),
        ("mcp__github__*", "mcp__github__create_issue", {}, True),
        ("mcp__github__*", "mcp__gitlab__create_issue", {}, False),
        ("mcp__time__get_current_time", "mcp__time__get_current_time", {}, True),
    ],
)
def test_tool_and_path_rules(
    tmp_path: Path, rule: str, tool: str, arguments: dict[str, str], matches: bool
) -> None:
    assert (_rules(deny=[rule]).decide(tool, arguments, tmp_path) is not None) == matches


def test_bad_rules_are_reported_and_leave_the_default() -> None:
    settings, problems = parse({"permissions": {"allow": ["Bash("]}})
    assert settings.permissions == Rules()
    assert problems and "is not a rule" in problems[0]


async def test_allowed_commands_are_allow_rules_and_ask_rules_still_ask(tmp_path: Path) -> None:
    model = ScriptedModel(
        call("bash", command="echo one"), call("bash", command="git push"), say("done")
    )
    agent, _ = make_agent(
        tmp_path,
        model,
        approve_commands="ask",
        allowed_commands=("echo",),
        permissions=_rules(ask=["Bash(git push:*)"]),
    )
    approver = Approver("deny")
    agent.tools.approver = approver
    await agent.run("go")
    assert approver.asked == ["git push"]  # echo ran unasked, as allowedCommands says
    assert "exit code 0" in results(model.requests[1])[0]["content"]
    assert "denied this command" in results(model.requests[2])[0]["content"]


async def test_a_deny_rule_refuses_with_its_reason_even_with_approve_always(
    tmp_path: Path,
) -> None:
    (tmp_path / ".env").write_text("X=1\n")
    model = ScriptedModel(
        call("read_file", path=".env"), call("bash", command="rm -rf x"), say(".")
    )
    agent, _ = make_agent(tmp_path, model, permissions=_rules(deny=["Read(.env)", "Bash(rm:*)"]))
    await agent.run("go")
    for request, rule in zip(model.requests[1:], ("Read(.env)", "Bash(rm:*)"), strict=True):
        (told,) = results(request)
        assert told["is_error"] and f"Denied by the permission rule {rule}" in told["content"]


async def test_an_ask_rule_puts_a_read_to_the_user(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello\n")
    model = ScriptedModel(call("read_file", path="notes.md"), say("."))
    agent, _ = make_agent(tmp_path, model, permissions=_rules(ask=["Read(notes.md)"]))
    approver = Approver("deny")
    agent.tools.approver = approver
    await agent.run("go")
    assert approver.asked == ["read_file notes.md"]
    assert results(model.requests[1])[0]["is_error"]


@pytest.mark.parametrize(
    ("mode", "permissions", "reviewed"),
    [
        ("default", {}, True),
        ("acceptEdits", {}, False),
        ("default", {"allow": ["Edit(src/**)"]}, False),
        ("acceptEdits", {"ask": ["Edit(src/**)"]}, True),
    ],
)
async def test_edits_are_reviewed_unless_accept_edits_or_an_allow_rule(
    tmp_path: Path, mode: str, permissions: dict[str, list[str]], reviewed: bool
) -> None:
    model = ScriptedModel(call("write_file", path="src/new.py", content="x = 1\n"), say("."))
    agent, _ = make_agent(tmp_path, model, permissions=parse_rules(permissions))
    agent.tools.mode = SessionMode(mode)  # type: ignore[arg-type]
    await agent.run("go")
    (change,) = agent.tools.workspace.proposals  # type: ignore[attr-defined]
    assert change.reviewed is reviewed
    assert (tmp_path / "src" / "new.py").read_text() == "x = 1\n"


def test_a_repository_adds_deny_and_ask_rules_never_allow_rules(tmp_path: Path) -> None:
    (tmp_path / ".agentls").mkdir()
    (tmp_path / ".agentls" / "settings.json").write_text(
        json.dumps(
            {"permissions": {"allow": ["Bash"], "deny": ["Read(secret.txt)"], "ask": ["Grep"]}}
        )
    )
    project = project_settings.load(tmp_path)
    assert project.rules == Rules(ask=(Rule("Grep"),), deny=(Rule("Read", "secret.txt"),))
    assert any("allow rules are ignored" in problem for problem in project.problems)


def test_a_symlinked_project_settings_file_is_not_read(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"permissions": {"deny": ["Bash"]}}))
    (tmp_path / ".agentls").mkdir()
    (tmp_path / ".agentls" / "settings.json").symlink_to(elsewhere)
    project = project_settings.load(tmp_path)
    assert project.rules == Rules() and project.problems


def test_plan_mode_offers_no_tool_that_changes_anything(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, ScriptedModel(), extra_tools=frozenset({"diagnostics"}))
    agent.tools.mode = SessionMode("plan")
    names = set(offered(agent.tools))
    # web_fetch changes nothing in the workspace; a deny rule keeps it out of a plan.
    assert names == {"read_file", "list_files", "grep", "todo_write", "diagnostics",
                     "exit_plan_mode", "web_fetch"}  # fmt: skip
    assert all(tool.read_only for tool in offered(agent.tools).values())
    agent.tools.mode = SessionMode("default")
    assert {"bash", "edit_file", "write_file"} <= set(offered(agent.tools))
    assert "exit_plan_mode" not in offered(agent.tools)


async def test_a_call_to_a_tool_plan_mode_hides_is_refused(tmp_path: Path) -> None:
    model = ScriptedModel(call("write_file", path="x", content="y"), say("."))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.mode = SessionMode("plan")
    await agent.run("go")
    assert "unknown tool 'write_file'" in results(model.requests[1])[0]["content"]
    assert not (tmp_path / "x").exists()


async def test_an_approved_plan_switches_to_default_and_is_carried_out(tmp_path: Path) -> None:
    model = ScriptedModel(
        call("exit_plan_mode", plan="1. write x"),
        call("write_file", path="x", content="y\n"),
        say("done"),
    )
    agent, _ = make_agent(tmp_path, model)
    agent.tools.mode = mode = SessionMode("plan")
    agent.tools.approver = approver = Approver("allow")
    assert (await agent.run("plan it")).status == "done"
    assert approver.asked == ["plan: 1. write x"]
    assert mode.current == "default"
    assert results(model.requests[1])[0]["content"] == APPROVED
    plan_tools, after = set(model.tool_names[0]), set(model.tool_names[1])
    assert "write_file" not in plan_tools and "write_file" in after
    assert (tmp_path / "x").read_text() == "y\n"


async def test_a_declined_plan_stays_in_plan_mode(tmp_path: Path) -> None:
    model = ScriptedModel(call("exit_plan_mode", plan="1. rm -rf"), say("what to change?"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.mode = mode = SessionMode("plan")
    agent.tools.approver = Approver("deny")
    await agent.run("plan it")
    assert mode.current == "plan"
    assert results(model.requests[1])[0]["content"] == DECLINED
