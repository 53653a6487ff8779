"""`agentls mcp list` and `agentls mcp approve NAME`, `agentls hooks approve`: the MCP
servers this folder would use, and the user's approval of what its repository asks to run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ..config import project_settings, user_settings
from ..extensions import mcp_servers
from ..extensions.for_task import project_waiting
from ..extensions.mcp_config import parse_servers
from ..extensions.programs import Programs
from ..extensions.trust import Trust


async def _listed(root: Path) -> int:
    settings, problems = user_settings.load()
    for problem in problems:
        print(f"agentls: {problem}")
    project = project_settings.load(root)
    trust = Trust(root)
    waiting = {w.name for w in project_waiting(project, trust) if w.kind == "mcp"}
    try:
        theirs = parse_servers(project.mcp_servers, "project")
    except ValueError as error:
        print(f"agentls: .mcp.json: {error}")
        theirs = ()
    programs = Programs.of(root, settings)
    specs = [*settings.mcp_servers, *(s for s in theirs if s.name not in waiting)]
    servers = [mcp_servers.start(spec, programs) for spec in specs]
    await mcp_servers.started(servers, settings.mcp_startup_timeout)
    for spec in theirs:
        if spec.name in waiting:
            print(f"{spec.name} (project): waiting for approval: {spec.described()}")
            print(f"  agentls mcp approve {spec.name}")
    for server in servers:
        spec = server.spec
        print(f"{spec.name} ({spec.source}): {server.state}: {spec.command_line()}")
        if server.state == "ready":
            names = ", ".join(tool.name for tool in server.tools) or "(none)"
            print(f"  tools: {names}")
        elif server.error:
            print("  " + server.error.replace("\n", "\n  "))
    if not specs and not waiting:
        print("No MCP servers: add them under mcpServers in " + str(user_settings.settings_path()))
    for server in servers:
        if server.task is not None:
            server.task.cancel()
    await asyncio.gather(*(s.task for s in servers if s.task), return_exceptions=True)
    return 0


def list_servers() -> int:
    return asyncio.run(_listed(Path.cwd()))


def approve(kind: str, name: str) -> int:
    """Approve the project's server `name` (or its hooks) as defined now."""
    root = Path.cwd()
    trust = Trust(root)
    for waiting in project_waiting(project_settings.load(root), trust):
        if waiting.kind == kind and waiting.name == name:
            trust.approve(kind, name, waiting.definition)
            print(f"Approved for {root}: {waiting.shown}")
            return 0
    what = "hooks" if kind == "hooks" else f"MCP server {name!r}"
    print(f"agentls: the project has no {what} waiting for approval (see `agentls mcp list`)")
    return 1
