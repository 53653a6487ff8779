"""Plugins: `agentls plugin add/list/remove`, and what a Claude Code plugin folder and an
Agent Plugins folder bring (skills, commands, hooks, MCP servers), against the fake API."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import agentls, run

TIME_SERVER = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
needs_time = pytest.mark.skipif(TIME_SERVER is None, reason="pip install mcp-server-time")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def _skill(folder: Path, name: str, body: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The plugin's {name}.\n---\n{body}\n"
    )


def claude_code_plugin(folder: Path) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "demo", "version": "1.0.0", "description": "A demo plugin"})
    )
    _skill(folder / "skills", "lint", "LINT BODY")
    (folder / "commands").mkdir()
    (folder / "commands" / "fix.md").write_text("Fix bug $1 in the plugin's way.\n")
    (folder / "agents").mkdir()
    (folder / "agents" / "reviewer.md").write_text("---\nname: reviewer\n---\nReview.\n")
    (folder / "hooks").mkdir()
    hook = {"type": "command", "command": "touch ${CLAUDE_PLUGIN_ROOT}/hooked"}
    (folder / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}})
    )
    (folder / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"time": {"command": str(TIME_SERVER)}}})
    )
    return folder


def agent_plugin(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "plugin.json").write_text(
        json.dumps({"$schema": "https://agentplugins.dev/1.0", "name": "neutral"})
    )
    _skill(folder / "skills", "style", "STYLE BODY")
    # Its server is a program of its own, named the spec's way: a path beginning with ./
    (folder / "bin").mkdir()
    (folder / "bin" / "clock").write_text(f'#!/bin/sh\nexec "{TIME_SERVER}" "$@"\n')
    (folder / "bin" / "clock").chmod(0o755)
    (folder / "mcp.json").write_text(
        json.dumps({"mcpServers": {"clock": {"type": "stdio", "command": "./bin/clock"}}})
    )
    return folder


def _told(fake: FakeAnthropic) -> list[str]:
    return [json.dumps(r.body["messages"][-1]) for r in fake.requests[1:]]


def test_add_list_and_remove_record_in_the_users_settings(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    plugin = claude_code_plugin(tmp_path / "demo-plugin")
    added = agentls(tmp_path, fake, "plugin", "add", str(plugin))
    assert added.returncode == 0, added.stdout
    settings = json.loads((tmp_path / ".config" / "agentls" / "settings.json").read_text())
    assert settings["plugins"] == [str(plugin)]
    listed = agentls(tmp_path, fake, "plugin", "list").stdout
    assert f"demo 1.0.0 (claude-code): {plugin}" in listed
    assert agentls(tmp_path, fake, "plugin", "add", str(tmp_path)).returncode == 1
    assert agentls(tmp_path, fake, "plugin", "remove", "demo").returncode == 0
    assert "No plugins" in agentls(tmp_path, fake, "plugin", "list").stdout


@needs_time
def test_a_claude_code_plugins_skill_command_hook_and_server_all_work(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    plugin = claude_code_plugin(tmp_path / "demo-plugin")
    project = tmp_path / "project"
    project.mkdir()
    assert agentls(project, fake, "plugin", "add", str(plugin)).returncode == 0
    listed = agentls(project, fake, "skills").stdout
    assert "demo:lint (plugin demo): The plugin's lint." in listed
    assert "/demo:fix (plugin demo)" in listed
    fake.script(
        reply(tool_use("skill", {"name": "demo:lint"})),
        reply(tool_use("mcp__demo_time__get_current_time", {"timezone": "Etc/UTC"})),
        reply(text("done")),
    )
    done = run(project, fake, "--yes", "-p", "/demo:fix 12")
    assert done.returncode == 0, done.stderr + done.stdout
    first = json.dumps(fake.requests[0].body["messages"][0])
    assert "Fix bug 12 in the plugin's way." in first
    assert "- demo:lint: The plugin's lint." in fake.requests[0].body["system"][0]["text"]
    told = _told(fake)
    assert "LINT BODY" in told[0] and "day_of_week" in told[1]
    assert (plugin / "hooked").exists()  # the user's hook: on the host, the folder expanded


@needs_time
def test_an_agent_plugins_skill_and_server_work(tmp_path: Path, fake: FakeAnthropic) -> None:
    plugin = agent_plugin(tmp_path / "neutral")
    project = tmp_path / "project"
    project.mkdir()
    assert agentls(project, fake, "plugin", "add", str(plugin)).returncode == 0
    fake.script(
        reply(tool_use("skill", {"name": "neutral:style"})),
        reply(tool_use("mcp__neutral_clock__get_current_time", {"timezone": "Etc/UTC"})),
        reply(text("done")),
    )
    done = run(project, fake, "--yes", "-p", "tidy up")
    assert done.returncode == 0, done.stderr + done.stdout
    told = _told(fake)
    assert "STYLE BODY" in told[0] and "day_of_week" in told[1]


def test_a_plugins_agents_are_listed_for_the_subagents(tmp_path: Path) -> None:
    from agentls.extensions.plugins import load

    plugin = load(claude_code_plugin(tmp_path / "demo-plugin"))
    assert [path.name for path in plugin.agent_files()] == ["reviewer.md"]


_BUNDLED_SERVER = """#!{python}
import os, sys
from mcp.server import MCPServer

server = MCPServer("where")


@server.tool()
def where() -> str:
    "Where the server runs."
    return f"cwd={{os.getcwd()}} data={{os.environ['PLUGIN_DATA']}} config={{sys.argv[1]}}"


server.run()
"""


def bundling_plugin(folder: Path, server: dict[str, object]) -> Path:
    """An Agent Plugins 1.0 plugin whose `mcp.json` names `server`, with its own MCP server
    in `bin/server` (a real one, on the SDK) and a `data/` folder."""
    (folder / "bin").mkdir(parents=True)
    (folder / "data").mkdir()
    schema = "https://agent-plugins.org/schemas/1.0.0/"
    (folder / "plugin.json").write_text(
        json.dumps({"$schema": f"{schema}plugin.schema.json", "name": "bundler"})
    )
    (folder / "bin" / "server").write_text(_BUNDLED_SERVER.format(python=sys.executable))
    (folder / "bin" / "server").chmod(0o755)
    (folder / "mcp.json").write_text(
        json.dumps({"$schema": f"{schema}mcp.schema.json", "mcpServers": {"own": server}})
    )
    return folder


def test_an_agent_plugins_bundled_server_named_by_its_relative_path_runs(
    tmp_path: Path, fake: FakeAnthropic, state_home: Path
) -> None:
    """Issue 38: `"command": "./bin/server"`, the spec's way (§4.1), failed with "a program
    is named by an absolute path or a name"."""
    server = {
        "type": "stdio",
        "command": "./bin/server",
        "args": ["${PLUGIN_ROOT}/config.json"],
        "cwd": "./data",
    }
    plugin = bundling_plugin(tmp_path / "bundler", server)
    project = tmp_path / "project"
    project.mkdir()
    assert agentls(project, fake, "plugin", "add", str(plugin)).returncode == 0
    fake.script(reply(tool_use("mcp__bundler_own__where", {})), reply(text("done")))
    done = run(project, fake, "--yes", "-p", "where are you?")
    assert done.returncode == 0, done.stderr + done.stdout
    result = fake.requests[1].body["messages"][-1]["content"][0]
    data = state_home / "agentls" / "plugin-data" / "bundler"
    told = json.dumps(result["content"])
    assert f"cwd={plugin / 'data'} data={data} config={plugin / 'config.json'}" in told
    assert data.is_dir() and not result.get("is_error")


@pytest.mark.parametrize(
    ("server", "said"),
    [
        ({"command": "./../outside/server"}, "leads out of"),
        ({"command": "${PLUGIN_ROOT}/../outside/server"}, "leads out of"),
        ({"command": "./linked/server"}, "leads out of"),  # bin/ linked outside
        ({"command": "/bin/sh"}, "a bare name or by a path in the plugin beginning with ./"),
        ({"command": "bin/server"}, "a bare name or by a path in the plugin beginning with ./"),
        ({"command": "./bin/server", "cwd": "data"}, "a path beginning with ./"),
        ({"command": "./bin/server", "cwd": "./linked"}, "leads out of"),
        ({"command": "./bin/server", "cwd": "${PLUGIN_DATA}/../.."}, "leads out of"),
        ({"command": "./bin/server", "cwd": "/tmp"}, "a path beginning with ./"),
        ({"command": "./missing"}, "does not exist"),
        ({"command": "./data"}, "is not an executable file"),
        ({"command": "./bin/server", "env": {"PLUGIN_ROOT": "/"}}, "must not set PLUGIN_ROOT"),
    ],
)
def test_a_plugins_paths_that_leave_it_are_refused(
    tmp_path: Path, server: dict[str, object], said: str
) -> None:
    from agentls.extensions.plugins import load

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "server").write_text("#!/bin/sh\n")
    (outside / "server").chmod(0o755)
    plugin_folder = bundling_plugin(tmp_path / "bundler", {"type": "stdio", **server})
    (plugin_folder / "linked").symlink_to(outside)
    specs, (problem,) = load(plugin_folder).mcp_servers()
    assert specs == ()
    assert problem.startswith("plugin bundler: its MCP server own is left out: ")
    assert said in problem


def test_a_link_inside_the_plugin_is_followed_and_what_runs_is_its_target(
    tmp_path: Path, state_home: Path
) -> None:
    from agentls.extensions.plugins import load

    plugin_folder = bundling_plugin(tmp_path / "bundler", {"command": "./current/server"})
    (plugin_folder / "current").symlink_to("bin")
    (spec,), problems = load(plugin_folder).mcp_servers()
    assert problems == []
    assert spec.definition["command"] == str(plugin_folder / "bin" / "server")
    assert spec.definition["cwd"] == str(plugin_folder)  # §7.2.1: the root when none is given
    assert spec.definition["env"]["PLUGIN_DATA"] == str(
        state_home / "agentls" / "plugin-data" / "bundler"
    )
