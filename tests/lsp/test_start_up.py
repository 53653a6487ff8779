"""What the language server imports before an editor's first task: only what `initialize`
needs. A task, a batch, a background task, MCP, skills, the web and the model's SDK load
when first used (the start-up row of `python -m bench`: spawn to `initialize` answered)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from lsp_pipe import JsonRpcPeer

HEAVY = [
    "agentls.agent.loop",  # a task: the loop, its tools and their wiring
    "agentls.wiring",
    "agentls.tools",
    "agentls.lsp.commands",
    "agentls.lsp.supervision",
    "agentls.batch.driver",  # a batch, and the worktree engine under it
    "agentls.batch.pool",
    "agentls.batch.worktree",
    "agentls.background.control",  # a background task
    "agentls.lsp.background",
    "agentls.extensions.mcp_servers",  # MCP
    "mcp",
    "agentls.extensions.skills",  # skills
    "yaml",
    "agentls.web.fetch",  # the web
    "agentls.tools.web_fetch",
    "httpx",
    "anthropic",  # the model's SDKs
    "openai",
]

# The server as `agentls` runs it, writing what it has imported once `initialized` is handled.
SERVER = """
import json, sys
from agentls.lsp import server

handled = server._initialized

def initialized(ls, params):
    handled(ls, params)
    with open(sys.argv[1], "w") as out:
        json.dump(sorted(sys.modules), out)

server._initialized = initialized
from agentls.cli import main
main([])
"""


async def _modules_after_initialize(root: Path, written: Path) -> list[str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SERVER,
        str(written),
        cwd=root,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdin is not None
    peer = JsonRpcPeer(process.stdout, process.stdin)
    try:
        await peer.initialize(root)
        for _ in range(600):
            if written.exists() and written.stat().st_size:
                break
            await asyncio.sleep(0.05)
        modules: list[str] = json.loads(written.read_text())
        return modules
    finally:
        process.kill()
        await process.wait()


def test_initialize_imports_nothing_a_task_batch_mcp_skills_or_the_web_need(
    tmp_path: Path,
) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    modules = asyncio.run(_modules_after_initialize(root, tmp_path / "modules.json"))
    assert "agentls.lsp.server" in modules  # it is the server that answered
    loaded = [name for name in HEAVY if name in modules]
    assert loaded == []
