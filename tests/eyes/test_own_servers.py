"""agentls's own eyes outside the LSP door (issue 42): a real `ruff server`'s diagnostics in
an edit's result under `agentls run -p`, and servers that misbehave named once while the task
finishes, none left running, none given a key."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agentls.agent.conversation import Conversation
from agentls.eyes.definitions import parse_servers
from agentls.eyes.session import definitions
from agentls.settings.assembly import Settings, parse
from agentls.shell.subprocess_shell import RefusingShell
from agentls.terminal.adapters import DiskWorkspace
from agentls.wiring import TaskSetup
from doubles import Approver, LanguageServersDouble, Recorder, ScriptedModel
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from real_servers import RUFF, left_after, ruff, started_for, write_settings
from terminal.test_terminal import run

STUBBORN = Path(__file__).parent / "stubborn_server.py"


def _settings(root: Path, servers: dict[str, object]) -> None:
    write_settings(root / ".config", servers)  # `run` sets XDG_CONFIG_HOME there


def _last_result(fake: FakeAnthropic) -> str:
    return json.dumps(fake.requests[-1].body["messages"][-1]["content"][0]["content"])


def _script(workspace: Path) -> Path:
    """The stubborn server's script, in the workspace: the sandbox the servers run in hides
    the rest of /tmp, where a checkout (and so the tests' own folder) may lie."""
    script = workspace / "stubborn_server.py"
    if not script.exists():
        shutil.copy(STUBBORN, script)
    return script


def _running(script: Path) -> list[int]:
    """The host's processes, zombies aside, whose command line names `script`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if str(script).encode() in command and state != "Z" and entry.name.isdigit():
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is in the test extras")
def test_ruff_reports_an_unused_import_after_a_write_under_p(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    _settings(tmp_path, {"ruff": ruff()})
    fake.script(
        reply(tool_use("write_file", {"path": "app.py", "content": "import os\n\nx = 1\n"})),
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "x = 1", "new_text": "y"})),
        reply(text("done")),
    )
    done = run(tmp_path, fake, "--yes", "-p", "write app.py")
    assert done.returncode == 0, done.stderr
    first = json.dumps(fake.requests[1].body["messages"][-1]["content"][0]["content"])
    assert "Problems the language servers report in app.py now:" in first
    assert "app.py:1: " in first and "`os` imported but unused" in first and "(Ruff)" in first
    # The second edit: the unused import was there before, the undefined name is new.
    second = _last_result(fake)
    assert "New problems the language servers report since this edit:" in second
    assert "app.py:3: " in second and "Undefined name `y`" in second
    assert "`os` imported but unused" not in second


def _stubborn(tmp_path: Path, mode: str) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": [
            str(_script(tmp_path)),
            mode,
            str(tmp_path / f"{mode}.env"),
            str(tmp_path / "pids"),
        ],
        "extensionToLanguage": {".py": "python"},
        "startupTimeout": 1500,
        "shutdownTimeout": 500,
    }


def test_stubborn_servers_are_named_once_and_none_is_left(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    servers = {mode: _stubborn(tmp_path, mode) for mode in ("silent", "crash", "deaf")}
    _settings(tmp_path, servers)
    write = tool_use("write_file", {"path": "a.py", "content": "a = 1\n"})
    again = tool_use("edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"})
    fake.script(reply(write), reply(again), reply(text("done")))
    started = time.monotonic()
    done = run(tmp_path, fake, "--yes", "-p", "write a.py", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    told = [json.loads(line) for line in done.stdout.splitlines()]
    notes = "".join(event["text"] for event in told if event["type"] == "note")
    assert notes.count("agentls: the language server silent") == 1  # the user, once each
    assert notes.count("agentls: the language server crash") == 1
    first = json.dumps(fake.requests[1].body["messages"][-1]["content"][0]["content"])
    assert "The language server silent" in first and "did not initialize within 1.5 s" in first
    assert "The language server crash" in first and "is out" in first
    assert "The language server deaf did not answer for this edit in time." in first
    second = _last_result(fake)
    assert "silent" not in second and "crash" not in second  # named once
    assert time.monotonic() - started < 30
    # Each server and its child wrote its pid: inside the sandbox's own pid namespace, so
    # what is left is looked for by the script's path on the host instead.
    assert len((tmp_path / "pids").read_text().split()) == 6
    deadline = time.monotonic() + 5
    while _running(_script(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running(_script(tmp_path)) == []
    for mode in servers:
        env = json.loads((tmp_path / f"{mode}.env").read_text())
        assert "ANTHROPIC_API_KEY" not in env and "test-key" not in env.values()
        assert env["AGENTLS_PROJECT_DIR"] == str(tmp_path)


def test_a_first_answer_may_take_the_servers_start_and_no_server_watches_agentls(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """`slow` gives its first diagnostics after 3.5 s, more than an edit waits once a server
    has answered, within its startupTimeout; `watchful` exits when the `processId` it was
    sent names no process in its pid namespace, as pyright does (it once got agentls's)."""
    servers = {
        mode: {**_stubborn(tmp_path, mode), "startupTimeout": 8000} for mode in ("slow", "watchful")
    }
    _settings(tmp_path, servers)
    write = tool_use("write_file", {"path": "a.py", "content": "a = 1\n"})
    again = tool_use("edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"})
    fake.script(reply(write), reply(again), reply(text("done")))
    done = run(tmp_path, fake, "--yes", "-p", "write a.py")
    assert done.returncode == 0, done.stderr
    first = fake.requests[1].body["messages"][-1]["content"][0]["content"]
    assert first.splitlines()[1:] == [
        "Problems the language servers report in a.py now:",
        "a.py:1: error: version 1 (slow)",
        "a.py:1: error: version 1 (watchful)",
    ]
    second = fake.requests[2].body["messages"][-1]["content"][0]["content"]
    assert second.splitlines()[1:] == [
        "New problems the language servers report since this edit:",
        "a.py:1: error: version 2 (slow)",
        "a.py:1: error: version 2 (watchful)",
    ]
    assert left_after(tmp_path) == []


def test_the_setting_takes_claude_codes_shape_and_refuses_a_wrong_one() -> None:
    (server,) = parse_servers(
        {
            "go": {
                "command": "gopls",
                "extensionToLanguage": {".go": "go"},
                "transport": "stdio",
                "restartOnCrash": True,
                "startupTimeout": 2000,
            }
        }
    )
    assert server.startup_timeout == 2.0 and server.serves(Path("m.go")) == "go"
    with pytest.raises(ValueError, match="extensionToLanguage"):
        parse_servers({"go": {"command": "gopls", "extensionToLanguage": {"go": "go"}}})
    settings, problems = parse({"lspServers": {"x": {"command": ""}}})
    assert settings.lsp_servers == () and "lspServers.x needs a command" in str(problems)


def test_built_in_servers_are_found_on_path_unless_configured_or_inside(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    for program in ("ruff", "basedpyright-langserver"):
        (folder / program).write_text("#!/bin/sh\n")
        (folder / program).chmod(0o755)
    found = [d.name for d in definitions((), tmp_path / "project", str(folder))]
    assert found == ["basedpyright", "ruff"]
    (off,) = parse_servers({"ruff": {**ruff(), "disabled": True}})
    assert [d.name for d in definitions((off,), tmp_path / "w", str(folder))] == ["basedpyright"]
    assert definitions((), folder.parent, str(folder)) == ()  # PATH inside the workspace


def test_only_a_door_without_an_editor_starts_its_own_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured = parse_servers({"ruff": ruff()})
    setup = TaskSetup(
        model=ScriptedModel(),  # type: ignore[arg-type]
        shell=RefusingShell("no"),
        settings=Settings(lsp_servers=configured),
        secrets=(),
    )

    def agent(**door: Any) -> Any:
        return setup.agent(DiskWorkspace(tmp_path), Approver(), Recorder(), Conversation(), **door)

    editor = agent(extra_tools=frozenset({"diagnostics"}), language=LanguageServersDouble())
    assert editor.tools.own_servers is None and editor.on_end is None  # the editor's eyes
    terminal = agent()
    assert terminal.tools.own_servers is not None and terminal.on_end is not None
    # None configured nor found on PATH: the task is exactly today's.
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    setup.settings = Settings()
    assert agent().tools.own_servers is None


async def test_the_lsp_door_asks_the_editor_and_starts_none_of_its_own(
    root: Path, fake: FakeAnthropic
) -> None:
    """The same server configured in the user's file and the editor's settings, which a
    door without an editor starts on the first .py file (the tests above): in the LSP door
    it never starts (it writes its environment's file first thing) and the edit's result
    says nothing of it."""
    servers = {"watchful": _stubborn(root, "watchful")}
    write_settings(root.parent / "config", servers)
    running: list[dict[int, Any]] = []

    def done(body: Any) -> Any:
        running.append(started_for(root))
        return reply(text("done"))

    write = tool_use("write_file", {"path": "a.py", "content": "a = 1\n"})
    fake.script(reply(write), done)
    async with editor(root, fake.url, settings={"lspServers": servers}) as client:
        await client.run_task("write a.py")
    assert (root / "a.py").read_text() == "a = 1\n"
    result = fake.requests[1].body["messages"][-1]["content"][0]["content"]
    assert result == "Created a.py: 1 hunk accepted."
    assert running == [{}] and not (root / "watchful.env").exists()


def test_a_server_offering_pull_diagnostics_is_asked_for_each_version(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """A server that only serves pull diagnostics (no push ever): each edit's result carries
    what it reports of the new text; an `unchanged` report keeps the last one's problems (so
    a later edit tells only what is new)."""
    _settings(tmp_path, {"pull": _stubborn(tmp_path, "pull")})
    edit = {"path": "app.py", "old_text": "bad = 2", "new_text": "bad = 2\nok = 1\nbad = 3"}
    fake.script(
        reply(tool_use("write_file", {"path": "app.py", "content": "bad = 1\n"})),
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "1", "new_text": "2"})),
        reply(tool_use("edit_file", edit)),
        reply(text("done")),
    )
    done = run(tmp_path, fake, "--yes", "-p", "write app.py")
    assert done.returncode == 0, done.stderr
    said = [""] + [
        json.dumps(r.body["messages"][-1]["content"][0]["content"]) for r in fake.requests[1:]
    ]
    assert "now:\\napp.py:1: error: `bad` here (pull)" in said[1], said[1]
    assert said[2] == '"Edited app.py: 1 hunk accepted."'  # unchanged: nothing new, in time
    assert "since this edit:\\napp.py:3: error: `bad` here (pull)" in said[3], said[3]
    assert "app.py:1:" not in said[3]
