"""Permission rules (allow / ask / deny) and the modes (default, acceptEdits, plan)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentls.config import project_settings
from agentls.permissions.modes import SessionMode
from agentls.permissions.rules import Rule, Rules, parse_rules
from agentls.permissions.settings import project_rules
from agentls.settings.assembly import parse
from agentls.tools import offered
from agentls.tools.exit_plan import APPROVED, DECLINED
from doubles import Approver, ScriptedModel, call, make_agent, results, say


def _rules(**kinds: list[str]) -> Rules:
    return parse_rules(kinds)


def _verdict(rules: Rules, tool: str, arguments: object, root: Path) -> str | None:
    from agentls.permissions.decide import decide  # here: the file's tests also run on main

    decided = decide(rules, tool, arguments, root)
    return decided.verdict if decided else None


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("npm test", "allow"),
        ("npm test -- --watch", "allow"),
        ("npm testx", None),
        ("npm test; curl evil", "ask"),  # chained, and rules guard bash: asked, never allowed
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
    assert _verdict(rules, "bash", {"command": command}, tmp_path) == verdict


def test_deny_wins_over_ask_over_allow(tmp_path: Path) -> None:
    from agentls.permissions.decide import decide

    every = ["Edit(src/**)"]
    decided = decide(
        _rules(allow=every, ask=every, deny=every), "edit_file", {"path": "src/a.py"}, tmp_path
    )
    assert decided and (decided.verdict, decided.rule) == ("deny", Rule("Edit", "src/**"))
    asked = _rules(allow=every, ask=every)
    assert _verdict(asked, "write_file", {"path": "src/a/b.py"}, tmp_path) == "ask"


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
    assert (_verdict(_rules(deny=[rule]), tool, arguments, tmp_path) is not None) == matches


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
    rules, problems = project_rules(project_settings.load(tmp_path).permissions)
    assert rules == Rules(ask=(Rule("Grep"),), deny=(Rule("Read", "secret.txt"),))
    assert any("allow rules are ignored" in problem for problem in problems)


def test_a_symlinked_project_settings_file_is_not_read(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"permissions": {"deny": ["Bash"]}}))
    (tmp_path / ".agentls").mkdir()
    (tmp_path / ".agentls" / "settings.json").symlink_to(elsewhere)
    project = project_settings.load(tmp_path)
    assert project_rules(project.permissions) == (Rules(), []) and project.problems


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


# One decision for commands: what a Bash rule can and cannot see (issue 27, P1).

_GUARDED = {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls:*)", "Bash(python3:*)"]}


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        # Wrapped, quoted or by path: still rm, denied.
        ("env rm x", "deny"),
        ("env -i FOO=1 rm x", "deny"),
        ("command rm x", "deny"),
        ("command -p rm x", "deny"),
        ("builtin rm x", "deny"),
        ("exec rm x", "deny"),
        ("/bin/rm x", "deny"),
        ("/usr/bin/../bin/rm x", "deny"),
        ("'r''m' x", "deny"),
        ("\\rm x", "deny"),
        ("r\\m x", "deny"),
        ('"rm" x', "deny"),
        ("rm\tx", "deny"),
        ("FOO=1 rm x", "deny"),
        ("nice -n 5 rm x", "deny"),
        ("nohup rm x", "deny"),
        ("time -p rm x", "deny"),
        ("timeout -s KILL 5 rm x", "deny"),
        ("stdbuf -oL rm x", "deny"),
        ("ionice -c 3 rm x", "deny"),
        ("setsid -f rm x", "deny"),
        ("sudo -u root rm x", "deny"),
        ("doas rm x", "deny"),
        ("busybox rm x", "deny"),
        ("xargs -0 rm", "deny"),
        ("ls\nrm x", "deny"),  # a line break chains
        ("ls; env rm x", "deny"),
        ("echo $(command rm x)", "deny"),
        # Code a rule reads into: denied where it can be read.
        ("sh -c 'rm x'", "deny"),
        ('bash -lc "/bin/rm x"', "deny"),
        ("eval rm x", "deny"),
        ("find . -name '*.o' -exec rm {} +", "deny"),
        ("env -S 'rm x'", "deny"),
        # Code it cannot read, or a name it cannot know: asked, never allowed.
        ("$'rm' x", "ask"),
        ("/bin/r? x", "ask"),
        ("python3 -c 'import shutil; shutil.rmtree(\"x\")'", "ask"),
        ("perl -e 'unlink \"x\"'", "ask"),
        ("awk 'BEGIN{system(\"rm x\")}'", "ask"),
        ("sh script.sh", "ask"),
        ("ls | sh", "ask"),
        ("ls > x", "ask"),
        ("ls # rm x", "ask"),
        ("taskset 1 rm x", "ask"),  # a wrapper nobody listed
        ("env --unknown-option rm x", "deny"),  # an unknown option: its words read anyway
        ("taskset 1 rm -rf /", "ask"),
        ("git -c alias.x='!rm x' x", "ask"),  # inside an argument: asked too
        ("sudo -s rm x", "deny"),
        # Plain, and what the allow rules say.
        ("ls -la", "allow"),
        ("python3 app.py", "allow"),
        ("command -v rm", "ask"),  # names rm among its words: asked, as taskset is
        ("find . -delete", None),  # not rm: the default (which asks) decides
    ],
)
def test_a_bash_rule_decides_only_what_it_can_see(
    tmp_path: Path, command: str, verdict: str | None
) -> None:
    assert _verdict(_rules(**_GUARDED), "bash", {"command": command}, tmp_path) == verdict


def test_without_deny_or_ask_rules_allow_rules_decide_as_before(tmp_path: Path) -> None:
    rules = _rules(allow=["Bash(python3:*)"])
    assert _verdict(rules, "bash", {"command": "python3 -c pass"}, tmp_path) == "allow"
    assert _verdict(rules, "bash", {"command": "python3 x; ls"}, tmp_path) is None


async def test_wrapped_rm_never_deletes_under_a_deny_rule(tmp_path: Path) -> None:
    """P1: `Bash(rm:*)` denied, yet `env rm x`, `command rm x`, `/bin/rm x` and
    `sh -c 'rm x'` each deleted the file; commands run unasked (approveCommands: always)."""
    (tmp_path / "x").write_text("keep\n")
    attacks = ["env rm x", "command rm x", "/bin/rm x", "sh -c 'rm x'", "rm -f x"]
    model = ScriptedModel(*(call("bash", command=c) for c in attacks), say("."))
    agent, _ = make_agent(tmp_path, model, permissions=_rules(deny=["Bash(rm:*)"]))
    await agent.run("go")
    assert (tmp_path / "x").read_text() == "keep\n"
    for request in model.requests[1:]:
        (told,) = results(request)
        assert told["is_error"] and "Denied by the permission rule Bash(rm:*)" in told["content"]


async def test_a_command_no_rule_can_read_is_asked_and_the_model_told_why(
    tmp_path: Path,
) -> None:
    (tmp_path / "x").write_text("keep\n")
    code = "python3 -c \"import os; os.remove('x')\""
    model = ScriptedModel(call("bash", command=code), call("bash", command="ls"), say("."))
    agent, _ = make_agent(
        tmp_path, model, permissions=_rules(deny=["Bash(rm:*)"], allow=["Bash(python3:*)"])
    )
    agent.tools.approver = approver = Approver("deny")
    await agent.run("go")
    assert approver.asked == [code]  # asked despite the allow rule; ls ran unasked
    assert (tmp_path / "x").exists()
    (told,) = results(model.requests[1])
    assert told["is_error"] and "not a plain command" in told["content"]
    assert "exit code 0" in results(model.requests[2])[0]["content"]
