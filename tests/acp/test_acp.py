"""`agentls acp` driven by a real ACP client (the protocol's TypeScript SDK, in
tests/acp/acp_client) against the fake Messages API."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_api import FakeAnthropic, auth_error, reply, text, tool_use
from pictures import png

CLIENT = Path(__file__).with_name("acp_client")
EVERYTHING = (
    Path(__file__).parents[1]
    / "extensions/mcp_servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)

pytestmark = pytest.mark.acp


@pytest.fixture(scope="session")
def client_installed() -> Path:
    """The client's npm packages (`.ci/run` installs them; so does this, once, if missing)."""
    assert shutil.which("node"), "the acp tier needs Node.js"
    if not (CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CLIENT,
            check=True,
            timeout=300,
        )
    return CLIENT / "drive.mjs"


def drive(
    driver: Path, root: Path, fake: FakeAnthropic, steps: list[dict[str, Any]], fs: bool = True
) -> list[dict[str, Any]]:
    """Run the scenario; every event the client saw, in order."""
    scenario = root.parent / "scenario.json"
    scenario.write_text(json.dumps({"cwd": str(root), "fs": fs, "steps": steps}))
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "XDG_CONFIG_HOME": str(root.parent / "config"),
        "XDG_STATE_HOME": str(root.parent / "state"),
    }
    done = subprocess.run(
        ["node", str(driver), str(scenario), "--", sys.executable, "-m", "agentls", "acp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def responses(events: list[dict[str, Any]], op: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "response" and e["op"] == op]


def updates(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        e["update"]
        for e in events
        if e["kind"] == "update" and e["update"]["sessionUpdate"] == kind
    ]


def streamed_text(events: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates(events, "agent_message_chunk"))


def test_initialize_and_an_edit_written_through_the_client(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    (root / "app.py").write_text("print('hello')\n")
    fake.script(
        reply(text("Reading."), tool_use("read_file", {"path": "app.py"})),
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "hello", "new_text": "bye"})),
        reply(text("Changed the greeting.")),
    )
    events = drive(client_installed, root, fake, [{"op": "new"}, {"op": "prompt", "text": "bye"}])

    (init,) = responses(events, "initialize")
    assert init["result"]["protocolVersion"] == 1
    assert init["result"]["agentCapabilities"]["loadSession"] is True
    assert init["result"]["agentCapabilities"]["promptCapabilities"]["embeddedContext"] is True
    # What is implemented is advertised: CodeCompanion offers /resume only then.
    assert init["result"]["agentCapabilities"]["sessionCapabilities"] == {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
    }
    (new,) = responses(events, "new")
    assert [m["id"] for m in new["result"]["modes"]["availableModes"]] == [
        "default",
        "acceptEdits",
        "plan",
        "always",
    ]

    # The edit was put to the user, its diff attached, after its tool call showed the diff
    # and before anything was written: this client writes blindly, as CodeCompanion does.
    order = [e["kind"] for e in events if e["kind"] in ("permission", "write")]
    assert order == ["permission", "write"]
    (asked,) = [e for e in events if e["kind"] == "permission"]
    assert [o["kind"] for o in asked["request"]["options"]] == ["allow_once", "reject_once"]
    assert asked["request"]["toolCall"]["content"] == [
        {
            "type": "diff",
            "path": str(root / "app.py"),
            "oldText": "print('hello')\n",
            "newText": "print('bye')\n",
        }
    ]
    step = asked["request"]["toolCall"]["toolCallId"]
    before = [e["update"] for e in events if e["kind"] == "update" and e["t"] <= asked["t"]]
    started = [u for u in before if u.get("toolCallId") == step]
    assert started[0]["sessionUpdate"] == "tool_call" and started[0]["kind"] == "edit"
    assert any(c["type"] == "diff" for u in started for c in u.get("content") or [])

    # The file was read through the client (its buffer) and written through it, exactly.
    reads = {e["params"]["path"] for e in events if e["kind"] == "read"}
    assert reads == {str(root / "app.py")}
    (write,) = [e["params"] for e in events if e["kind"] == "write"]
    assert write == {
        "sessionId": new["result"]["sessionId"],
        "path": str(root / "app.py"),
        "content": "print('bye')\n",
    }
    assert (root / "app.py").read_text() == "print('bye')\n"

    calls = updates(events, "tool_call")
    assert [(c["kind"], c["title"]) for c in calls] == [
        ("read", "read_file app.py"),
        ("edit", "edit_file app.py"),
    ]
    assert calls[1]["locations"] == [{"path": str(root / "app.py")}]
    diffs = [
        c
        for u in updates(events, "tool_call_update")
        for c in u.get("content") or []
        if c["type"] == "diff"
    ]
    assert diffs == [
        {
            "type": "diff",
            "path": str(root / "app.py"),
            "oldText": "print('hello')\n",
            "newText": "print('bye')\n",
        }
    ]
    statuses = [u.get("status") for u in updates(events, "tool_call_update") if u.get("status")]
    assert statuses == ["completed", "completed"]

    text_seen = streamed_text(events)
    assert "Reading." in text_seen and "Changed the greeting." in text_seen
    assert "done ·" not in text_seen  # the answer is the model's words alone
    (prompt,) = responses(events, "prompt")
    assert prompt["result"]["_meta"]["agentls"]["outcome"].startswith("done · 3 steps · 1 edit · ")
    assert prompt["result"]["stopReason"] == "end_turn"
    assert prompt["result"]["usage"]["outputTokens"] > 0
    # The model was told the edit landed.
    assert "app.py" in json.dumps(fake.requests[2].body["messages"][-1])


def test_a_rejected_edit_is_not_written_and_the_model_is_told(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    (root / "app.py").write_text("print('hello')\n")
    fake.script(
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "hello", "new_text": "bye"})),
        reply(text("Left it.")),
    )
    events = drive(
        client_installed,
        root,
        fake,
        [{"op": "new"}, {"op": "prompt", "text": "bye", "permission": "reject"}],
    )
    assert [e["kind"] for e in events if e["kind"] in ("permission", "write")] == ["permission"]
    assert (root / "app.py").read_text() == "print('hello')\n"
    result = fake.requests[1].body["messages"][-1]["content"][0]
    assert result["is_error"] is True
    assert "not applied: the user rejected it" in result["content"]
    statuses = [u.get("status") for u in updates(events, "tool_call_update") if u.get("status")]
    assert statuses == ["failed"]


def test_accept_edits_and_always_write_unasked(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    (root / "app.py").write_text("one\n")
    fake.script(
        reply(tool_use("write_file", {"path": "app.py", "content": "two\n"})),
        reply(text("ok")),
        reply(tool_use("write_file", {"path": "app.py", "content": "three\n"})),
        reply(text("ok")),
    )
    events = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "new"},
            {"op": "setMode", "mode": "acceptEdits"},
            {"op": "prompt", "text": "two", "permission": "reject"},
            {"op": "setMode", "mode": "always"},
            {"op": "prompt", "text": "three", "permission": "reject"},
        ],
    )
    assert [e for e in events if e["kind"] == "permission"] == []
    assert [e["params"]["content"] for e in events if e["kind"] == "write"] == ["two\n", "three\n"]
    assert (root / "app.py").read_text() == "three\n"


def test_a_command_asks_permission_and_a_rejection_is_the_models_to_read(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool_use("bash", {"command": "echo allowed"})), reply(text("ok")))
    events = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "new"},
            {"op": "prompt", "text": "first", "permission": "allow"},
        ],
    )
    (asked,) = [e for e in events if e["kind"] == "permission"]
    (call,) = updates(events, "tool_call")
    # The question follows the tool call it is about.
    (started,) = [e for e in events if e["kind"] == "update" and e["update"] is call]
    assert started["t"] <= asked["t"] and events.index(started) < events.index(asked)
    assert asked["request"]["toolCall"]["toolCallId"] == call["toolCallId"]
    asked = asked["request"]
    assert [o["kind"] for o in asked["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert asked["toolCall"]["rawInput"] == {"command": "echo allowed"}
    assert fake.requests[1].body["messages"][-1]["content"][0]["content"] == "exit code 0\nallowed"

    fake.script(
        reply(tool_use("bash", {"command": "echo rejected > out.txt"})),
        reply(text("ok")),
    )
    events = drive(
        client_installed,
        root,
        fake,
        [{"op": "new"}, {"op": "prompt", "text": "second", "permission": "reject"}],
    )
    assert not (root / "out.txt").exists()
    result = fake.requests[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] is True and "denied" in result["content"].lower()
    failed = [u for u in updates(events, "tool_call_update") if u.get("status") == "failed"]
    assert len(failed) == 1


def test_allow_always_and_the_always_mode_stop_asking(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(tool_use("bash", {"command": "echo one"})),
        reply(tool_use("bash", {"command": "echo two"})),
        reply(text("ok")),
        reply(tool_use("bash", {"command": "echo three"})),
        reply(text("ok")),
    )
    events = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "new"},
            {"op": "prompt", "text": "first", "permission": "allow_always"},
            {"op": "prompt", "text": "second", "permission": "reject"},
        ],
    )
    # Asked once; the answer held for the rest of the task and the next one.
    assert len([e for e in events if e["kind"] == "permission"]) == 1
    outputs = [
        m["content"][0]["content"]
        for r in fake.requests
        for m in r.body["messages"][-1:]
        if m["role"] == "user"
        and isinstance(m["content"], list)
        and m["content"]
        and m["content"][0].get("type") == "tool_result"
    ]
    assert outputs[-1] == "exit code 0\nthree"


def test_cancel_during_a_command_ends_the_turn_and_kills_it(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool_use("bash", {"command": "sleep 31.25"})), reply(text("not reached")))
    events = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "new"},
            {"op": "setMode", "mode": "always"},
            {"op": "prompt", "text": "wait", "cancelOnExecute": True},
        ],
    )
    (prompt,) = responses(events, "prompt")
    assert prompt["result"]["stopReason"] == "cancelled"
    (cancel,) = [e for e in events if e["kind"] == "cancel"]
    assert prompt["t"] - cancel["t"] < 2000
    assert subprocess.run(["pgrep", "-f", "sleep 31.25"], capture_output=True).returncode == 1
    assert len(fake.requests) == 1
    # The cancelled tool call ends: a client would show it running for ever.
    (call,) = updates(events, "tool_call")
    ends = [
        u["status"]
        for u in updates(events, "tool_call_update")
        if u["toolCallId"] == call["toolCallId"] and u.get("status") in ("completed", "failed")
    ]
    assert ends == ["failed"]


def test_without_client_files_edits_ask_and_land_on_disk(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(tool_use("write_file", {"path": "new.txt", "content": "made\n"})),
        reply(tool_use("write_file", {"path": "no.txt", "content": "refused\n"})),
        reply(text("ok")),
    )
    events = drive(
        client_installed,
        root,
        fake,
        [{"op": "new"}, {"op": "prompt", "text": "write", "permission": "allow"}],
        fs=False,
    )
    assert [e for e in events if e["kind"] in ("read", "write")] == []
    asked = [e["request"] for e in events if e["kind"] == "permission"]
    assert [o["kind"] for o in asked[0]["options"]] == ["allow_once", "reject_once"]
    assert asked[0]["toolCall"]["content"][0]["type"] == "diff"
    assert (root / "new.txt").read_text() == "made\n"


def test_attached_files_and_the_clients_mcp_servers(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    """The client's MCP servers (the reference time server and server-everything) are
    started and their tools called, each call put to the client like a command."""
    time_server = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
    if time_server is None or not EVERYTHING.exists():
        pytest.skip("pip install mcp-server-time; npm ci in tests/extensions/mcp_servers")
    fake.script(
        reply(tool_use("mcp__time__get_current_time", {"timezone": "Etc/UTC"})),
        reply(tool_use("mcp__everything__echo", {"message": "from ACP"})),
        reply(text("seen")),
    )
    servers = [
        {"name": "time", "command": time_server, "args": [], "env": []},
        {"name": "everything", "command": "node", "args": [str(EVERYTHING), "stdio"], "env": []},
    ]
    (root.parent / "config" / "agentls").mkdir(parents=True, exist_ok=True)
    (root.parent / "config" / "agentls" / "settings.json").write_text(
        json.dumps({"mcpStartupTimeout": 120, "toolSearchThreshold": 100000})
    )
    events = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "new", "mcpServers": servers},
            {
                "op": "prompt",
                "text": "what is in it?",
                "attach": {"uri": (root / "notes.md").as_uri(), "text": "the attached words"},
            },
        ],
    )
    sent = json.dumps(fake.requests[0].body["messages"])
    assert "what is in it?" in sent and "the attached words" in sent
    offered = [tool["name"] for tool in fake.requests[0].body["tools"]]
    assert "mcp__time__get_current_time" in offered and "mcp__everything__echo" in offered
    told = [json.dumps(r.body["messages"][-1]) for r in fake.requests[1:]]
    assert "Etc/UTC" in told[0] and "day_of_week" in told[0]
    assert "Echo: from ACP" in told[1]
    asked = [e["request"]["toolCall"]["title"] for e in events if e["kind"] == "permission"]
    assert asked == ['mcp__time__get_current_time {"timezone": "Etc/UTC"}',
                     'mcp__everything__echo {"message": "from ACP"}']  # fmt: skip


def test_bad_cwd_and_unknown_session_are_clear_errors(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    events = drive(client_installed, root / "missing", fake, [{"op": "new"}])
    (new,) = responses(events, "new")
    assert "not an absolute folder" in new["error"]["message"]


def test_the_plan_reaches_the_client(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    todos = [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending"},
    ]
    fake.script(reply(tool_use("todo_write", {"todos": todos})), reply(text("planned")))
    events = drive(client_installed, root, fake, [{"op": "new"}, {"op": "prompt", "text": "plan"}])
    (plan,) = updates(events, "plan")
    assert [(e["content"], e["status"]) for e in plan["entries"]] == [
        (t["content"], t["status"]) for t in todos
    ]


def test_a_saved_session_is_listed_loaded_and_continued(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool_use("bash", {"command": "echo remembered"})), reply(text("noted")))
    first = drive(
        client_installed,
        root,
        fake,
        [{"op": "new"}, {"op": "setMode", "mode": "always"}, {"op": "prompt", "text": "first"}],
    )
    (new,) = responses(first, "new")
    session_id = new["result"]["sessionId"]

    # A new agent process (the editor restarted) finds it, replays it, and goes on with it.
    fake.script(reply(text("second answer")))
    events = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "list"},
            {"op": "load", "sessionId": session_id},
            {"op": "prompt", "text": "second", "permission": "allow"},
        ],
    )
    (listed,) = responses(events, "list")
    assert [(s["sessionId"], s["title"]) for s in listed["result"]["sessions"]] == [
        (session_id, "first")
    ]
    (loaded,) = responses(events, "load")
    assert "error" not in loaded
    replayed = [e for e in events if e["kind"] == "update" and e["t"] < loaded["t"]]
    kinds = [e["update"]["sessionUpdate"] for e in replayed]
    assert kinds == [
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ], kinds
    assert replayed[0]["update"]["content"]["text"] == "first"
    assert "remembered" in json.dumps(replayed[2]["update"]["content"])
    # The model saw the whole earlier conversation.
    sent = json.dumps(fake.requests[-1].body["messages"])
    assert "first" in sent and "remembered" in sent and "noted" in sent and "second" in sent


def test_loading_an_unknown_session_is_a_clear_error(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    events = drive(client_installed, root, fake, [{"op": "load", "sessionId": "nope"}])
    (loaded,) = responses(events, "load")
    assert "no saved session nope" in loaded["error"]["message"]


def test_a_refusal_is_the_refusal_stop_reason_and_a_failure_an_error(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("I can't help with that."), stop_reason="refusal"), auth_error())
    events = drive(
        client_installed,
        root,
        fake,
        [{"op": "new"}, {"op": "prompt", "text": "bad"}, {"op": "prompt", "text": "again"}],
    )
    refused, failed = responses(events, "prompt")
    assert refused["result"]["stopReason"] == "refusal"
    # In the error's message, which every client shows (not only in its data).
    assert "The API key was refused (401)." in failed["error"]["message"]
    # The same outcome line as the other doors, beside the answer rather than in it.
    assert refused["result"]["_meta"]["agentls"]["outcome"].startswith("failed · 1 step")
    assert "failed ·" not in streamed_text(events)


def test_a_subagent_is_a_tool_call_that_streams_and_asks_through_the_session(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(tool_use("agent", {"description": "run the greeting", "prompt": "greet"})),
        reply(tool_use("bash", {"command": "echo hello-from-sub"})),  # the subagent's
        reply(text("It printed hello-from-sub.")),
        reply(text("ok")),
    )
    events = drive(
        client_installed,
        root,
        fake,
        [{"op": "new"}, {"op": "prompt", "text": "delegate", "permission": "allow"}],
    )
    (started,) = [u for u in updates(events, "tool_call") if u.get("kind") == "think"]
    meta = started["_meta"]["agentls"]
    assert started["title"] == "general-purpose: run the greeting"
    assert meta["subagentSessionId"].endswith("/agent-1") and meta["name"] == "general-purpose"
    call = started["toolCallId"]
    (asked,) = [e["request"] for e in events if e["kind"] == "permission"]
    assert asked["toolCall"]["toolCallId"] == call
    assert asked["toolCall"]["rawInput"] == {"command": "echo hello-from-sub"}
    streamed = [u for u in updates(events, "tool_call_update") if u["toolCallId"] == call]
    shown = [c["content"]["text"] for u in streamed for c in u.get("content") or []]
    assert any("bash echo hello-from-sub" in line for line in shown)
    assert any("It printed hello-from-sub." in line for line in shown)
    assert streamed[-1]["status"] == "completed"
    subagent_result = fake.requests[2].body["messages"][-1]["content"][0]["content"]
    assert "hello-from-sub" in subagent_result
    assert (
        "It printed hello-from-sub."
        in fake.requests[3].body["messages"][-1]["content"][0]["content"]
    )
    assert streamed_text(events) == "ok"


def test_a_replay_shows_the_users_words_not_agentls_notes(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool_use("bash", {"command": "sleep 31.5"})), reply(text("not reached")))
    first = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "new"},
            {"op": "setMode", "mode": "always"},
            {"op": "prompt", "text": "wait for it", "cancelOnExecute": True},
        ],
    )
    (new,) = responses(first, "new")
    events = drive(
        client_installed, root, fake, [{"op": "load", "sessionId": new["result"]["sessionId"]}]
    )
    said = [u["content"]["text"] for u in updates(events, "user_message_chunk")]
    assert said == ["wait for it"]
    assert "cancelled this task" not in json.dumps(events)
    # The cancelled call is told as ended, there as it was live.
    assert [u.get("status") for u in updates(events, "tool_call_update")] == ["failed"]


def test_an_image_in_the_prompt_reaches_the_model(
    client_installed: Path, root: Path, fake: FakeAnthropic
) -> None:
    shot = base64.b64encode(png(50, 20)).decode()
    fake.script(reply(text("A red bar.")))
    events = drive(
        client_installed,
        root,
        fake,
        [
            {"op": "new"},
            {
                "op": "prompt",
                "text": "what is this?",
                "image": {"data": shot, "mimeType": "image/png"},
            },
        ],
    )
    (init,) = responses(events, "initialize")
    assert init["result"]["agentCapabilities"]["promptCapabilities"]["image"] is True
    (image,) = fake.requests[0].images
    assert image == {"type": "base64", "media_type": "image/png", "data": shot, "where": "user"}
    assert "what is this?" in json.dumps(fake.requests[0].body["messages"])
    assert "A red bar." in streamed_text(events)
