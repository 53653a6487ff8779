"""An MCP server for the tests: `python slow_server.py [hang-at-start] [N_TOOLS]`.

Its tools: `wait` (never answers: a call that hangs), `echo` (read-only), and N more `tool_i`
with schemas of realistic size, for the tool-search tests; `hang-at-start` never serves."""

from __future__ import annotations

import asyncio
import sys

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

if "hang-at-start" in sys.argv:
    sys.stderr.write("starting up slowly...\n")
    sys.stderr.flush()
    while True:
        asyncio.run(asyncio.sleep(3600))

server = MCPServer("slow")


@server.tool(description="Wait for ever (a call that hangs).")
async def wait() -> str:
    await asyncio.Event().wait()
    return "never"


@server.tool(description="Say the text back.", annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    return f"echo: {text}"


def _numbered(number: int) -> None:
    def tool(query: str, limit: int = 10, region: str = "eu", verbose: bool = False) -> str:
        return f"tool_{number}: {query} {limit} {region} {verbose}"

    server.tool(
        name=f"tool_{number}",
        description=f"Look up records of kind {number} in the inventory by a query, a limit "
        "and a region; answers one line per record found.",
    )(tool)


for index in range(int(next((a for a in sys.argv[1:] if a.isdigit()), "0"))):
    _numbered(index)

server.run("stdio")
