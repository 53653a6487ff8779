"""An MCP server for the tests, written against the wire (protocol 2025-11-25, stdio) so each
behaviour is exact: `tools/list` in three pages (a tool per page), `add_tool` (a fourth tool
appears and `notifications/tools/list_changed` says so), `ask` (an `elicitation/create` of
two fields with defaults, answered with what came back), a resource in `resources/list`
(two pages) and a prompt `review` with an argument."""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {"name": "first", "description": "Page one's tool."},
    {"name": "second", "description": "Page two's tool."},
    {"name": "add_tool", "description": "Make a new tool, `late`, appear."},
]
LATE = {"name": "late", "description": "The tool that came later."}
ASK = {"name": "ask", "description": "Ask the user their name and age."}
RESOURCES = [
    {"uri": "memo://one", "name": "one", "description": "The first memo"},
    {"uri": "memo://two", "name": "two", "description": "The second memo", "mimeType": "text/x"},
]
PROMPT = {
    "name": "review",
    "description": "Review a file",
    "arguments": [{"name": "path", "required": True}, {"name": "focus", "required": False}],
}
ASK_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "default": "Ada"},
        "age": {"type": "integer", "description": "in years", "default": 36},
    },
    "required": ["name"],
}
tools = [*TOOLS, ASK]
next_id = 1000


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def page(items: list[Any], cursor: str | None, size: int) -> tuple[list[Any], str | None]:
    start = int(cursor or 0)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def elicit() -> dict[str, Any]:
    """Ask the client, and wait for its answer (other messages meanwhile are notifications)."""
    global next_id
    next_id += 1
    asking = next_id
    params = {"mode": "form", "message": "Who are you?", "requestedSchema": ASK_SCHEMA}
    send({"jsonrpc": "2.0", "id": asking, "method": "elicitation/create", "params": params})
    while (message := read()) is not None:
        if message.get("id") == asking and "method" not in message:
            return message.get("result") or {"error": message.get("error")}
    return {}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    cursor = params.get("cursor")
    if method == "initialize":
        capabilities = {
            "tools": {"listChanged": True},
            "resources": {"listChanged": True},
            "prompts": {"listChanged": True},
        }
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "serverInfo": {"name": "paged", "version": "1"},
        }
    if method == "tools/list":
        found, after = page(tools, cursor, 1 if int(cursor or 0) < 2 else 10)
        listed = [{**t, "inputSchema": {"type": "object"}} for t in found]
        return {"tools": listed, **({"nextCursor": after} if after else {})}
    if method == "tools/call":
        name = params["name"]
        if name == "add_tool":
            tools.append(LATE)
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return text("added the tool late")
        if name == "ask":
            return text("the answer: " + json.dumps(elicit(), sort_keys=True))
        return text(f"{name} ran")
    if method == "resources/list":
        found, after = page(RESOURCES, cursor, 1)
        return {"resources": found, **({"nextCursor": after} if after else {})}
    if method == "resources/read":
        return {"contents": [{"uri": params["uri"], "text": f"the memo at {params['uri']}"}]}
    if method == "prompts/list":
        return {"prompts": [PROMPT]}
    if method == "prompts/get":
        arguments = params.get("arguments") or {}
        words = f"Review {arguments.get('path')} for {arguments.get('focus', 'anything')}."
        return {"messages": [{"role": "user", "content": {"type": "text", "text": words}}]}
    if method == "ping":
        return {}
    raise KeyError(method)


while (message := read()) is not None:
    if "id" not in message or "method" not in message:
        continue  # a notification, or an answer nobody waits for
    try:
        result = answer(message["method"], message.get("params") or {})
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    except KeyError:
        error = {"code": -32601, "message": f"no method {message['method']}"}
        send({"jsonrpc": "2.0", "id": message["id"], "error": error})
