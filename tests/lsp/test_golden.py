"""The `agent/*` wire, pinned: every message docs/protocol.md lists (the notifications and
requests the server sends, and the answers of the `agent.*` commands), as the real server
sends them to an editor, compared by shape with tests/golden/<message>.json.

A shape keeps every key, the values of the keys that are part of the protocol (`method`,
`state`, `status`, `kind`, a choice's `id`) and the JSON type of the others, so a renamed,
dropped or retyped field fails here before it reaches a client. After a deliberate change
of the wire, `AGENTLS_GOLDEN=write pytest tests/lsp/test_golden.py` writes the files anew;
the diff is the change to review (and docs/protocol.md to update)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path
from typing import Any

from editor_client import EditorClient, approves_commands, editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsprotocol import types
from pictures import png

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
WRITE = os.environ.get("AGENTLS_GOLDEN") == "write"
PROTOCOL_VALUES = {"jsonrpc", "method", "state", "status", "kind"}
"""Keys whose values are the protocol's own words, kept as they are in a shape."""
EYES = ("diagnostics", "definition", "references", "symbols")


def shape(value: Any, key: str = "") -> Any:
    """`value` with what varies from run to run (ids, times, texts, counts) replaced by its
    JSON type; a list by the distinct shapes of its items."""
    if isinstance(value, dict):
        keep_id = key == "choices"  # a choice's id is what the client answers
        return {
            k: v if k in PROTOCOL_VALUES or (keep_id and k == "id") else shape(v, k)
            for k, v in sorted(value.items())
        }
    if isinstance(value, list):
        shapes = {json.dumps(shape(item, key), sort_keys=True) for item in value}
        return [json.loads(s) for s in sorted(shapes)]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


def advertise_everything(capabilities: types.ClientCapabilities) -> None:
    approves_commands(capabilities)
    capabilities.experimental["agentls"].update(dict.fromkeys(EYES, True))


def answer_the_eyes(client: EditorClient, root: Path) -> None:
    """The editor's language servers, answering as the protocol says they do."""
    uri = client.uri(root / "app.py")
    here = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}
    location = {"uri": uri, "range": here}
    problem = {"range": here, "severity": 1, "message": "undefined name", "source": "pyflakes"}

    @client.feature("agent/diagnostics")
    def diagnostics(params: Any) -> dict[str, Any]:
        return {"items": [{"uri": uri, "diagnostics": [problem]}]}

    @client.feature("agent/definition")
    def definition(params: Any) -> dict[str, Any]:
        return {"locations": [location]}

    @client.feature("agent/references")
    def references(params: Any) -> dict[str, Any]:
        return {"locations": [location]}

    @client.feature("agent/symbols")
    def symbols(params: Any) -> dict[str, Any]:
        return {"symbols": [{"name": "greet", "kind": 12, "location": location}]}


def script_a_task_that_sends_everything(fake: FakeAnthropic) -> None:
    at = {"path": "app.py", "line": 1, "symbol": "greet"}
    edit = {"path": "app.py", "old_text": "return x", "new_text": "return y"}
    # bash waits for the file the test makes once it has steered the running task, and
    # takes it away again: whether the task's checkpoint saw it (it is recorded in the
    # background) must not change what the undo answers.
    wait = "while [ ! -e go ]; do sleep 0.02; done; rm go; echo went"
    fake.script(
        reply(tool_use("todo_write", {"todos": [{"content": "Greet", "status": "in_progress"}]})),
        reply(tool_use("bash", {"command": wait})),
        reply(tool_use("edit_file", edit)),
        reply(tool_use("definition", at)),
        reply(tool_use("references", at)),
        reply(tool_use("symbols", {"query": "greet"})),
        reply(tool_use("agent", {"description": "find greet", "prompt": "find greet"})),
        reply(tool_use("read_file", {"path": "app.py"})),  # the subagent's steps
        reply(text("greet is at app.py:1")),
        reply(text("Done.")),
        reply(text("The summary.")),  # agent.compact
        reply(text("Hello.")),  # agent.chat
    )


async def test_the_agent_messages_keep_their_golden_shapes(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text("def greet(x):\n    return x\n")
    script_a_task_that_sends_everything(fake)
    seen: dict[str, Any] = {}
    async with editor(
        root,
        fake.url,
        capabilities=advertise_everything,
        initialization={"approveCommands": "ask"},
    ) as client:
        answer_the_eyes(client, root)
        client.approvals = ["Allow"]
        client.progress_reports["golden"] = []  # the token's progress, as an editor creates it
        (root / "shot.png").write_bytes(png(8, 8))
        pasted = base64.b64encode(png(4, 4)).decode()
        images = [{"uri": client.uri(root / "shot.png")}, {"data": pasted, "mimeType": "image/png"}]
        # What a client sends, pinned beside what it gets: the images are a request's.
        seen["agent.runTask.arguments"] = {"task": "greet", "images": images}
        _, task = client.start_task("greet", token="golden", images=images)
        while not any(step["tool"] == "bash" for step in client.steps):
            await asyncio.sleep(0.01)
        seen["agent.steer"] = await client.command("agent.steer", {"text": "and be brief"})
        (root / "go").touch()
        seen["agent.runTask"] = await task
        seen["agent.cancel"] = await client.command("agent.cancel")
        seen["agent.checkpoints"] = await client.command("agent.checkpoints")
        sessions = await client.command("agent.sessions")
        seen["agent.sessions"] = sessions
        seen["agent.compact"] = await client.command("agent.compact")
        seen["agent.undo"] = await client.command("agent.undo")
        seen["agent.newSession"] = await client.command("agent.newSession")
        seen["agent.resumeSession"] = await client.command(
            "agent.resumeSession", {"id": sessions[0]["id"]}
        )
        chat = {"messages": [{"role": "user", "text": "hi"}]}
        seen["agent.chat"] = await client.command("agent.chat", chat)
        seen["agent.model"] = await client.command("agent.model")
        sent = list(client.received)
    for message in sent:
        method = message.get("method", "")
        if method.startswith("agent/"):
            state = message["params"].get("state")
            stated = method in ("agent/step", "agent/subagent")
            name = method if not stated else f"{method}.{state}"
            if "subagent" in message["params"] and method != "agent/subagent":
                name += ".subagent"  # a subagent's own, which name it and its parent step
            seen.setdefault(name, message)
    assert seen["agent.runTask"]["status"] == "done", seen["agent.runTask"]
    assert all(seen[f"agent/{eye}"] for eye in EYES)

    shapes = {name.replace("/", "-"): shape(message) for name, message in seen.items()}
    if WRITE:
        for stale in GOLDEN.glob("*.json"):
            stale.unlink()
        GOLDEN.mkdir(exist_ok=True)
        for name, found in shapes.items():
            (GOLDEN / f"{name}.json").write_text(json.dumps(found, indent=2) + "\n")
    pinned = {path.stem: json.loads(path.read_text()) for path in GOLDEN.glob("*.json")}
    assert sorted(pinned) == sorted(shapes), "a message was added or removed: AGENTLS_GOLDEN=write"
    for name, found in shapes.items():
        assert found == pinned[name], f"{name} changed shape; see tests/golden/{name}.json"


def test_a_shape_keeps_keys_types_and_the_protocols_words() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "agent/step",
        "params": {"state": "started", "tool": "bash", "detail": None, "n": 1.5},
        "choices": [{"id": "allow", "title": "Allow"}, {"id": "deny", "title": "Deny"}],
        "items": [{"a": 1}, {"a": 2}, {"a": None}],
    }
    assert shape(message) == {
        "choices": [{"id": "allow", "title": "string"}, {"id": "deny", "title": "string"}],
        "id": "number",
        "items": [{"a": "null"}, {"a": "number"}],
        "jsonrpc": "2.0",
        "method": "agent/step",
        "params": {"detail": "null", "n": "number", "state": "started", "tool": "string"},
    }


BACKGROUND = GOLDEN / "background"


async def test_the_background_messages_keep_their_golden_shapes(
    fake: FakeAnthropic, root: Path
) -> None:
    """The background tasks' wire (docs/protocol.md, "Background tasks"), pinned apart from
    the task's messages in tests/golden/background/."""
    from background_tasks import make_repository, wait_for_status

    make_repository(root, {"app.py": "x = 0\n", "old.txt": "old\n"})
    fake.script_for(
        "Change things.",
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "x = 0", "new_text": "x = 1"})),
        reply(tool_use("bash", {"command": "rm old.txt"})),
        reply(text("Changed.")),
    )
    seen: dict[str, Any] = {}
    async with editor(root, fake.url) as client:
        started = await client.command("agent.runInBackground", {"task": "Change things."})
        seen["agent.runInBackground"] = started
        listed = lambda: client.command("agent.backgroundTasks")  # noqa: E731
        await wait_for_status(listed, started["id"], {"done"})
        seen["agent.backgroundTasks"] = await listed()
        seen["agent.reviewBackgroundTask"] = await client.command(
            "agent.reviewBackgroundTask", {"id": started["id"]}
        )
        seen["agent.cancelBackgroundTask"] = await client.command(
            "agent.cancelBackgroundTask", {"id": started["id"]}
        )
        seen["agent.discardBackgroundTask"] = await client.command(
            "agent.discardBackgroundTask", {"id": started["id"]}
        )
        sent = list(client.received)
    told = [m for m in sent if m.get("method") == "agent/backgroundTask"]
    seen["agent-backgroundTask"] = next(m for m in told if m["params"]["status"] == "done")
    shapes = {name: shape(message) for name, message in seen.items()}
    if WRITE:
        BACKGROUND.mkdir(exist_ok=True)
        for stale in BACKGROUND.glob("*.json"):
            stale.unlink()
        for name, found in shapes.items():
            (BACKGROUND / f"{name}.json").write_text(json.dumps(found, indent=2) + "\n")
    pinned = {path.stem: json.loads(path.read_text()) for path in BACKGROUND.glob("*.json")}
    assert sorted(pinned) == sorted(shapes), "a message was added or removed: AGENTLS_GOLDEN=write"
    for name, found in shapes.items():
        assert found == pinned[name], f"{name} changed shape; see tests/golden/background/"
