"""MCP servers through the official SDK: the reference `mcp-server-time`, a test server that
hangs, tool search, and a project's `.mcp.json` waiting for approval."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agentls.config.project_settings import ProjectSettings
from agentls.extensions import mcp_servers
from agentls.extensions.for_task import TaskExtensions, project_waiting
from agentls.extensions.mcp_config import expand, parse_servers
from agentls.extensions.programs import Programs
from agentls.extensions.trust import Trust
from agentls.settings.assembly import parse
from doubles import Approver, ScriptedModel, call, make_agent, results, say

HERE = Path(__file__).parent
TIME_SERVER = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
SLOW = [sys.executable, str(HERE / "mcp_servers" / "slow_server.py")]


def _with_servers(
    agent: Any, servers: dict[str, Any], project: ProjectSettings | None = None, **settings: Any
) -> list[str]:
    """Gives the agent its task's extensions, as wiring does; returns what the user is told."""
    notes: list[str] = []
    chosen = replace(agent.tools.settings, **settings)
    agent.tools.settings = chosen
    extensions = TaskExtensions(
        agent.tools.workspace.root,
        chosen,
        project or ProjectSettings(),
        parse_servers(servers),
        agent.tools.approver,
        lambda: "s",
        notes.append,
        programs=Programs.of(agent.tools.workspace.root, chosen),
    )
    extensions.context = agent.tools
    agent.tools.hooks = extensions
    return notes


def _slow(*arguments: str) -> dict[str, Any]:
    return {"command": SLOW[0], "args": [*SLOW[1:], *arguments]}


@pytest.mark.skipif(TIME_SERVER is None, reason="pip install mcp-server-time")
async def test_a_task_calls_the_reference_time_server(tmp_path: Path) -> None:
    model = ScriptedModel(
        call("mcp__time__get_current_time", timezone="Etc/UTC"),
        call("mcp__time__get_current_time"),  # its real schema requires a timezone
        say("done"),
    )
    agent, _ = make_agent(tmp_path, model)
    _with_servers(agent, {"time": {"command": TIME_SERVER}}, mcp_startup_timeout=60.0)
    assert (await agent.run("what time is it?")).status == "done"
    assert "mcp__time__get_current_time" in model.tool_names[0]
    first, second = results(model.requests[1])[0], results(model.requests[2])[0]
    assert '"timezone": "Etc/UTC"' in first["content"] and "is_error" not in first
    assert second["is_error"] and "'timezone' is a required property" in second["content"]


async def test_a_call_asks_like_a_command_unless_a_rule_allows_it(tmp_path: Path) -> None:
    model = ScriptedModel(
        call("mcp__slow__echo", text="a"), call("mcp__slow__echo", text="b"), say("ok")
    )
    agent, _ = make_agent(tmp_path, model, approve_commands="ask")
    agent.tools.approver = approver = Approver("deny")
    rules = parse({"permissions": {"allow": ["mcp__slow__*"], "ask": []}})[0].permissions
    _with_servers(agent, {"slow": _slow()}, mcp_startup_timeout=60.0)
    await agent.run("echo")
    assert approver.asked[0] == 'mcp__slow__echo {"text": "a"}'
    assert "denied" in results(model.requests[1])[0]["content"]
    model = ScriptedModel(call("mcp__slow__echo", text="c"), say("ok"))
    agent, _ = make_agent(tmp_path, model, approve_commands="ask", permissions=rules)
    _with_servers(agent, {"slow": _slow()}, mcp_startup_timeout=60.0)
    await agent.run("echo")
    assert results(model.requests[1])[0]["content"] == "echo: c"


async def test_a_server_that_hangs_at_start_up_neither_blocks_nor_hangs_the_task(
    tmp_path: Path,
) -> None:
    warm, _ = make_agent(tmp_path, ScriptedModel(say("ok")))
    _with_servers(warm, {"slow": _slow()}, mcp_startup_timeout=60.0)
    await warm.run("start the good one (slow to import on a loaded machine)")
    model = ScriptedModel(call("mcp__slow__echo", text="x"), say("done"))
    agent, _ = make_agent(tmp_path, model)
    notes = _with_servers(
        agent, {"stuck": _slow("hang-at-start"), "slow": _slow()}, mcp_startup_timeout=1.0
    )
    started = time.monotonic()
    assert (await agent.run("go")).status == "done"
    assert time.monotonic() - started < 8
    assert not [name for name in model.tool_names[0] if name.startswith("mcp__stuck__")]
    assert results(model.requests[1])[0]["content"] == "echo: x"  # the other server works
    (note,) = notes
    assert "stuck" in note and "mcpStartupTimeout" in note


async def test_a_server_that_fails_is_named_once_with_its_stderr(tmp_path: Path) -> None:
    script = "import sys; sys.stderr.write('bad config: no token\\n'); sys.exit(3)"
    broken = {"command": sys.executable, "args": ["-c", script]}
    for attempt in range(2):
        agent, _ = make_agent(tmp_path, ScriptedModel(say("ok")))
        notes = _with_servers(agent, {"broken": broken})
        await agent.run("go")
        if attempt == 0:
            (note,) = notes
            assert "broken" in note and "bad config: no token" in note
        else:
            assert notes == []  # named once


async def test_a_call_that_hangs_is_bounded_and_a_cancel_reaches_it(tmp_path: Path) -> None:
    model = ScriptedModel(call("mcp__slow__wait"), say("done"))
    agent, _ = make_agent(tmp_path, model)
    _with_servers(agent, {"slow": _slow()}, mcp_call_timeout=1.0, mcp_startup_timeout=60.0)
    assert (await agent.run("wait")).status == "done"
    assert "did not answer within 1 s" in results(model.requests[1])[0]["content"]

    model = ScriptedModel(call("mcp__slow__wait"), say("never"))
    agent, progress = make_agent(tmp_path, model)
    _with_servers(agent, {"slow": _slow()}, mcp_startup_timeout=60.0)
    task = asyncio.ensure_future(agent.run("wait"))
    while not any(event[0] == "step" for event in progress.events):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    task.cancel()
    result = await asyncio.wait_for(task, 5)
    assert result.status == "cancelled"


async def test_many_tools_go_through_tool_search_and_a_found_one_has_its_schema(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        call("tool_search", query="records kind 42"),
        call("mcp__slow__tool_42", query="bolts", limit="ten"),
        call("mcp__slow__tool_42", query="bolts", limit=3),
        say("done"),
    )
    agent, _ = make_agent(tmp_path, model)
    _with_servers(agent, {"slow": _slow("100")}, mcp_startup_timeout=30.0)
    await agent.run("find bolts")
    offered = model.tool_names[0]
    assert "tool_search" in offered and not [n for n in offered if n.startswith("mcp__")]
    found = results(model.requests[1])[0]["content"]
    assert "mcp__slow__tool_42" in found and '"limit"' in found
    assert "'ten' is not of type 'integer'" in results(model.requests[2])[0]["content"]
    assert results(model.requests[3])[0]["content"] == "tool_42: bolts 3 eu False"
    # The prefix stays byte-stable: the same tools are offered at every request.
    assert all(names == offered for names in model.tool_names)


def test_variables_expand_from_the_environment() -> None:
    env = {"TOKEN": "abc"}
    assert expand("Bearer ${TOKEN}", env) == "Bearer abc"
    assert expand("${PORT:-8080}", env) == "8080"
    with pytest.raises(ValueError, match="MISSING"):
        expand("${MISSING}", env)


async def test_a_project_server_waits_for_approval_and_a_changed_one_asks_again(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "started"
    definition = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    project = ProjectSettings(mcp_servers={"evil": definition})
    model = ScriptedModel(say("ok"))
    agent, _ = make_agent(tmp_path, model)  # approveCommands always: no --yes approves it
    agent.tools.approver = approver = Approver("deny")
    _with_servers(agent, {}, project)
    await agent.run("go")
    assert (
        approver.asked
        == [
            f"project: start the project's MCP server evil ({sys.executable} "
            f"-c {json.dumps(definition['args'][1])[1:-1]!r})"
        ]
        or approver.asked
    )
    assert not marker.exists()
    trust = Trust(tmp_path)
    assert [w.name for w in project_waiting(project, trust)] == ["evil"]
    trust.approve("mcp", "evil", definition)
    assert project_waiting(project, trust) == []
    changed = ProjectSettings(mcp_servers={"evil": {**definition, "args": ["-c", "pass"]}})
    assert [w.name for w in project_waiting(changed, trust)] == ["evil"]


async def test_project_variables_never_expand_a_secret(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret")
    spec = parse_servers({"x": {"command": "echo", "args": ["${ANTHROPIC_API_KEY}"]}}, "project")
    programs = Programs(tmp_path, "off", False)
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        mcp_servers._transport(spec[0], programs, tmp_path, None)


def test_a_servers_cwd_is_an_absolute_folder_or_the_definition_is_refused() -> None:
    (spec,) = parse_servers({"x": {"command": "echo", "cwd": "/srv/tools"}})
    assert spec.definition["cwd"] == "/srv/tools" and 'cwd: "/srv/tools"' in spec.described()
    for cwd in ("tools", "./tools", 3):
        with pytest.raises(ValueError, match="cwd: the folder it runs in, as an absolute path"):
            parse_servers({"x": {"command": "echo", "cwd": cwd}})
