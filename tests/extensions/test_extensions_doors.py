"""MCP servers, modes and project trust through the terminal and LSP doors, against the fake
API and the reference servers."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import agentls, run

TIME_SERVER = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
EVERYTHING = (
    Path(__file__).parent
    / "mcp_servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
SERVERS = {
    "time": {"command": str(TIME_SERVER)},
    "everything": {"command": "node", "args": [str(EVERYTHING), "stdio"]},
}
needs_servers = pytest.mark.skipif(
    TIME_SERVER is None or not EVERYTHING.exists(),
    reason="pip install mcp-server-time; npm ci in tests/extensions/mcp_servers",
)
SETTINGS = {"mcpServers": SERVERS, "mcpStartupTimeout": 120, "toolSearchThreshold": 100000}


def _user_settings(root: Path, settings: dict[str, object]) -> None:
    folder = root / ".config" / "agentls"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings))


def _script_calls(fake: FakeAnthropic) -> None:
    fake.script(
        reply(tool_use("mcp__time__get_current_time", {"timezone": "Etc/UTC"})),
        reply(tool_use("mcp__everything__echo", {"message": "through the door"})),
        reply(text("done")),
    )


def _told(fake: FakeAnthropic) -> list[str]:
    return [json.dumps(r.body["messages"][-1]) for r in fake.requests[1:]]


@needs_servers
def test_the_terminal_calls_both_reference_servers(tmp_path: Path, fake: FakeAnthropic) -> None:
    _user_settings(tmp_path, SETTINGS)
    _script_calls(fake)
    done = run(tmp_path, fake, "--yes", "what time is it?")
    assert done.returncode == 0, done.stderr + done.stdout
    told = _told(fake)
    assert "day_of_week" in told[0] and "Echo: through the door" in told[1]


@needs_servers
async def test_lsp_calls_both_reference_servers_and_lists_them(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    _script_calls(fake)
    # mcpServers and approveCommands are user-only: the editor's initializationOptions.
    settings = {**SETTINGS, "approveCommands": "always"}
    async with editor(tmp_path, fake.url, initialization=settings) as client:
        result = await client.run_task("what time is it?")
        listed = await client.command("agent.mcpServers")
    assert result["status"] == "done"
    told = _told(fake)
    assert "day_of_week" in told[0] and "Echo: through the door" in told[1]
    states = {server["name"]: server["state"] for server in listed}
    assert states == {"time": "ready", "everything": "ready"}


def test_a_project_server_does_not_start_before_approval_even_with_yes(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    marker = tmp_path / "started"
    server = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": server}}))
    fake.script(reply(text("ok")))
    done = run(tmp_path, fake, "--yes", "hi", stdin="n\n")
    assert "The project asks to start the project's MCP server repo" in done.stdout
    assert not marker.exists()
    listed = agentls(tmp_path, fake, "mcp", "list")
    assert "repo (project): waiting for approval" in listed.stdout
    assert not marker.exists()


def test_plan_mode_from_the_command_line_offers_only_read_only_tools(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool_use("exit_plan_mode", {"plan": "1. edit x"})), reply(text("ok")))
    done = run(tmp_path, fake, "--mode", "plan", "plan it", stdin="n\n")
    assert done.returncode == 0, done.stderr
    offered = {tool["name"] for tool in fake.requests[0].body["tools"]}
    assert "exit_plan_mode" in offered and not offered & {"bash", "edit_file", "write_file"}
    assert "Carry out this plan? [y/N]" in done.stdout


@pytest.mark.skipif(TIME_SERVER is None, reason="pip install mcp-server-time")
def test_an_mcp_step_answered_in_json_reads_as_a_line_in_the_terminal(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """Issue 40, row 10: the time server answers in pretty-printed JSON, and the step's
    result line was its first line, `✓ {`."""
    _user_settings(tmp_path, {**SETTINGS, "mcpServers": {"time": SERVERS["time"]}})
    fake.script(
        reply(tool_use("mcp__time__get_current_time", {"timezone": "Etc/UTC"})),
        reply(text("done")),
    )
    done = run(tmp_path, fake, "--yes", "what time is it?")
    assert done.returncode == 0, done.stderr + done.stdout
    result = done.stdout.splitlines()[
        done.stdout.splitlines().index("▸ mcp__time__get_current_time") + 1
    ]
    assert result.startswith("  ✓ timezone: Etc/UTC, datetime: "), done.stdout
