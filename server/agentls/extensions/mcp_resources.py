"""MCP resources for the model: one tool, `read_mcp_resource` (server, uri), offered while a
ready server lists resources; its description names them, so the model knows what there is.
Reading is asked like a read-only tool (never): a resource is the server's data, as a tool's
result is."""

from __future__ import annotations

import base64
from typing import Any

from ..tools.base import BeforeChange, Tool, ToolContext, ToolError
from .mcp_servers import Server

NAME = "read_mcp_resource"
LISTED = 40
"""Resources named in the tool's description at most; more are found by `agentls mcp resources`
or the server's own tools."""


def listing(servers: list[Server]) -> list[tuple[str, str, str]]:
    """(server, uri, what) for each resource of each ready server."""
    return [
        (server.spec.name, str(resource.uri), resource.description or resource.name or "")
        for server in servers
        if server.state == "ready"
        for resource in server.resources
    ]


def contents_text(result: Any) -> str:
    """A resource's contents as text: text as it is, binary as a note of its size."""
    parts: list[str] = []
    for item in result.contents:
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(text)
        else:
            size = len(base64.b64decode(getattr(item, "blob", "") or ""))
            parts.append(f"[{item.uri}: {item.mime_type or 'binary'}, {size} bytes, not shown]")
    return "\n".join(parts) or "(empty)"


def read_tool(servers: list[Server], timeout: float) -> Tool | None:
    """The tool over the ready servers' resources, or None when none lists any."""
    found = listing(servers)
    if not found:
        return None
    by_name = {server.spec.name: server for server in servers if server.state == "ready"}

    async def read(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
        server = by_name.get(arguments["server"])
        if server is None:
            raise ToolError(
                f"no MCP server {arguments['server']!r} with resources; "
                f"the servers: {', '.join(sorted(by_name))}"
            )
        return contents_text(await server.read_resource(arguments["uri"], timeout))

    shown = "; ".join(
        f"{name} {uri}" + (f" ({what})" if what else "") for name, uri, what in found[:LISTED]
    )
    more = f"; and {len(found) - LISTED} more" if len(found) > LISTED else ""
    return Tool(
        name=NAME,
        description=(
            "Read a resource of an MCP server (data it offers: files, records, documents) by "
            f"the server's name and the resource's URI. The resources: {shown}{more}"
        ),
        properties={
            "server": {"type": "string", "description": "The MCP server's name"},
            "uri": {"type": "string", "description": "The resource's URI"},
        },
        required=("server", "uri"),
        handler=read,
        summary_field="uri",
        read_only=True,
    )
