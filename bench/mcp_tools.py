"""The first request's fixed overhead with 100 MCP tools configured (tool search stands in
for their schemas), beside the same one-word task with none."""

from __future__ import annotations

import sys
from pathlib import Path

from .api import FakeAnthropic
from .editor import BenchEditor, server_command
from .runs import SETTINGS, Trajectory, agentls_task
from .trajectory import ONE_WORD_TASK, greeting_turns

MCP_TOOLS = 100
SERVER = Path(__file__).resolve().parents[1] / "tests/extensions/mcp_servers/slow_server.py"


async def with_mcp_tools(fake: FakeAnthropic, env: dict[str, str], root: Path) -> Trajectory:
    """The one-word task in a server configured with an MCP server of 100 tools (and two)."""
    servers = {"inventory": {"command": sys.executable, "args": [str(SERVER), str(MCP_TOOLS)]}}
    # A generous start-up bound: the measure is the prompt, not a loaded machine's spawn.
    settings = {**SETTINGS, "mcpServers": servers, "mcpStartupTimeout": 120}
    editor = BenchEditor(settings)
    await editor.start(server_command("agentls"), env, root)
    try:
        trajectory = await agentls_task(editor, fake, ONE_WORD_TASK, greeting_turns())
        # A server that failed to start offers no tool: the row would measure nothing.
        [server] = await editor.command("agent.mcpServers")
        if server["state"] != "ready" or len(server["tools"]) < MCP_TOOLS:
            raise RuntimeError(f"the MCP server is {server['state']}: {server['error']}")
        return trajectory
    finally:
        await editor.close()
