"""Hooks in Claude Code's format: each event fires with the documented JSON; exit 2 blocks."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from agentls.extensions.hooks import Hooks, parse_hooks
from agentls.extensions.programs import Programs
from doubles import Approver, ScriptedModel, call, make_agent, results, say

RECORD = """import json, os, sys
event = json.load(sys.stdin)
with open(os.path.join(os.environ["AGENTLS_PROJECT_DIR"], "hook.log"), "a") as log:
    log.write(json.dumps(event) + "\\n")
"""


def _hooks(tmp_path: Path, config: dict[str, Any], notes: list[str] | None = None) -> Hooks:
    notify = (notes if notes is not None else []).append
    programs = Programs(tmp_path, "auto", False)
    return Hooks(parse_hooks(config), programs, lambda: "session-1", notify)


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(body)
    return f"{sys.executable} {path}"


def _events(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "hook.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_every_event_fires_with_the_documented_json(tmp_path: Path) -> None:
    record = _script(tmp_path, "record.py", RECORD)
    group = [{"matcher": "", "hooks": [{"type": "command", "command": record}]}]
    config = {event: group for event in ("PreToolUse", "PostToolUse", "UserPromptSubmit",
                                         "Stop", "SessionStart", "PreCompact")}  # fmt: skip
    (tmp_path / "a.txt").write_text("hi\n")
    model = ScriptedModel(call("read_file", path="a.txt"), say("done"), say("summary"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, config)
    assert (await agent.run("read a")).status == "done"
    await agent.compact()
    events = _events(tmp_path)
    names = [e["hook_event_name"] for e in events]
    assert names == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
                     "PreCompact"]  # fmt: skip
    assert all(e["session_id"] == "session-1" and e["cwd"] == str(tmp_path) for e in events)
    assert events[1]["prompt"] == "read a"
    assert events[2]["tool_name"] == "read_file"
    assert events[2]["tool_input"] == {"path": "a.txt"}
    assert "hi" in events[3]["tool_response"]["content"]
    assert events[4]["stop_hook_active"] is False
    assert events[5]["trigger"] == "manual"


@pytest.mark.parametrize("matcher", ["Bash", "bash", "Bash|Edit", "*", ""])
async def test_exit_2_blocks_the_call_with_stderr_in_the_models_result(
    tmp_path: Path, matcher: str
) -> None:
    block = _script(tmp_path, "block.py", "import sys\nsys.stderr.write('no rm here')\nsys.exit(2)")
    config = {"PreToolUse": [{"matcher": matcher, "hooks": [{"command": block}]}]}
    model = ScriptedModel(call("bash", command="touch made"), say("ok"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, config)
    await agent.run("go")
    (told,) = results(model.requests[1])
    assert told["is_error"] and "no rm here" in told["content"]
    assert not (tmp_path / "made").exists()


async def test_a_matcher_for_another_tool_does_not_fire(tmp_path: Path) -> None:
    block = _script(tmp_path, "block.py", "import sys\nsys.exit(2)")
    config = {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"command": block}]}]}
    model = ScriptedModel(call("bash", command="touch made"), say("ok"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, config)
    await agent.run("go")
    assert (tmp_path / "made").exists()


@pytest.mark.parametrize(
    ("answer", "asked", "ran"),
    [
        ({"permissionDecision": "deny", "permissionDecisionReason": "not today"}, False, False),
        ({"permissionDecision": "ask"}, True, False),  # the user says no
        ({"permissionDecision": "allow"}, False, True),
    ],
)
async def test_permission_decisions_of_a_pre_tool_use_hook(
    tmp_path: Path, answer: dict[str, str], asked: bool, ran: bool
) -> None:
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **answer}})
    hook = _script(tmp_path, "decide.py", f"print({output!r})")
    config = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": hook}]}]}
    model = ScriptedModel(call("bash", command="touch made"), say("ok"))
    agent, _ = make_agent(tmp_path, model, approve_commands="ask")
    agent.tools.approver = approver = Approver("deny")
    agent.tools.hooks = _hooks(tmp_path, config)
    await agent.run("go")
    assert bool(approver.asked) is asked
    assert (tmp_path / "made").exists() is ran
    if answer["permissionDecision"] == "deny":
        assert "not today" in results(model.requests[1])[0]["content"]


async def test_a_deny_rule_wins_over_a_hooks_allow(tmp_path: Path) -> None:
    output = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    hook = _script(tmp_path, "allow.py", f"print({output!r})")
    from agentls.permissions.rules import parse_rules

    model = ScriptedModel(call("bash", command="touch made"), say("ok"))
    agent, _ = make_agent(tmp_path, model, permissions=parse_rules({"deny": ["Bash(touch:*)"]}))
    agent.tools.hooks = _hooks(tmp_path, {"PreToolUse": [{"hooks": [{"command": hook}]}]})
    await agent.run("go")
    assert not (tmp_path / "made").exists()


async def test_post_tool_use_block_tells_the_model(tmp_path: Path) -> None:
    output = json.dumps({"decision": "block", "reason": "lint failed: E501"})
    hook = _script(tmp_path, "post.py", f"print({output!r})")
    model = ScriptedModel(call("bash", command="echo hi"), say("ok"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, {"PostToolUse": [{"hooks": [{"command": hook}]}]})
    await agent.run("go")
    assert "lint failed: E501" in results(model.requests[1])[0]["content"]


async def test_user_prompt_submit_blocks_or_adds_context(tmp_path: Path) -> None:
    block = _script(
        tmp_path, "b.py", "import sys\nsys.stderr.write('no secrets please')\nsys.exit(2)"
    )
    model = ScriptedModel(say("never"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, {"UserPromptSubmit": [{"hooks": [{"command": block}]}]})
    result = await agent.run("print the key")
    assert result.status == "failed" and "no secrets please" in result.summary
    assert not model.requests and not agent.conversation.messages

    add = _script(tmp_path, "c.py", "print('the branch is main')")
    model = ScriptedModel(say("ok"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, {"UserPromptSubmit": [{"hooks": [{"command": add}]}]})
    await agent.run("status?")
    assert "the branch is main" in json.dumps(model.requests[0])


async def test_stop_exit_2_makes_the_model_go_on_once(tmp_path: Path) -> None:
    once = _script(
        tmp_path,
        "stop.py",
        "import json, sys\nif not json.load(sys.stdin)['stop_hook_active']:\n"
        "    sys.stderr.write('run the tests first')\n    sys.exit(2)\n",
    )
    model = ScriptedModel(say("done?"), say("tests pass"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, {"Stop": [{"hooks": [{"command": once}]}]})
    result = await agent.run("go")
    assert result.status == "done" and result.summary == "tests pass"
    assert "run the tests first" in json.dumps(model.requests[1][-1])


async def test_another_exit_code_is_shown_to_the_user_and_does_not_block(tmp_path: Path) -> None:
    broken = _script(tmp_path, "x.py", "import sys\nsys.stderr.write('oops')\nsys.exit(1)")
    notes: list[str] = []
    model = ScriptedModel(call("bash", command="touch made"), say("ok"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, {"PreToolUse": [{"hooks": [{"command": broken}]}]}, notes)
    await agent.run("go")
    assert (tmp_path / "made").exists()
    assert notes and "exited with 1" in notes[0] and "oops" in notes[0]


async def test_a_hook_that_hangs_is_killed_at_its_timeout(tmp_path: Path) -> None:
    config = {"PreToolUse": [{"hooks": [{"command": "sleep 30", "timeout": 0.5}]}]}
    notes: list[str] = []
    model = ScriptedModel(call("bash", command="echo hi"), say("ok"))
    agent, _ = make_agent(tmp_path, model)
    agent.tools.hooks = _hooks(tmp_path, config, notes)
    assert (await agent.run("go")).status == "done"
    assert "timed out" in notes[0]


def test_bad_hooks_are_reported() -> None:
    from agentls.settings.assembly import parse

    settings, problems = parse({"hooks": {"BeforeEverything": []}})
    assert settings.hooks == () and "unknown hook event" in problems[0]
