"""A background task starts from what the user sees (HEAD and uncommitted changes), with the
ignored files `.worktreeinclude` names, after the `backgroundSetup` command; `.env`'s values
never reach the model; a command a rule asks about is left for the review."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from background_tasks import gated, git, make_repository, wait_for_status
from doubles import running_argv, unique_seconds
from editor_client import EditorClient, editor
from fake_api import FakeAnthropic, reply, text, tool_use

SECRET = "sk-live-0123456789abcdef0123"


async def tasks(client: EditorClient) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = await client.command("agent.backgroundTasks")
    return listed


async def test_the_worktree_has_the_uncommitted_changes_and_the_included_env(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    make_repository(
        root,
        {
            "app.py": "x = 0\n",
            ".gitignore": ".env\nbuild/\nnode_modules/\n",
            ".worktreeinclude": ".env\nnode_modules/\n",
        },
    )
    (root / ".env").write_text(f"API_TOKEN={SECRET}\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("not named, not copied\n")
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (root / "app.py").write_text("x = 1  # not committed\n")
    (root / "new.py").write_text("y = 2\n")
    git(root, "add", "new.py")  # staged
    index_before = (root / ".git" / "index").read_bytes()
    fake.script_for(
        "Look around.",
        reply(tool_use("bash", {"command": "cat .env; cat app.py new.py; ls build || true"})),
        reply(tool_use("read_file", {"path": ".env"})),
        reply(text("Looked.")),
    )
    started = await lsp_editor.command("agent.runInBackground", {"task": "Look around."})
    item = await wait_for_status(lambda: tasks(lsp_editor), started["id"], {"done", "failed"})
    assert item["status"] == "done", item
    tree = Path(started["worktree"])
    assert (tree / ".env").read_text() == f"API_TOKEN={SECRET}\n"
    assert (tree / "node_modules" / "left-pad").is_symlink()
    assert (tree / "node_modules" / "left-pad" / "index.js").exists()
    assert not (tree / "build").exists()
    assert (tree / "app.py").read_text() == "x = 1  # not committed\n"
    assert (tree / "new.py").read_text() == "y = 2\n"
    # The user's index, stash and branch are as they were.
    assert (root / ".git" / "index").read_bytes() == index_before
    assert git(root, "stash", "list") == ""
    assert git(root, "status", "--porcelain").splitlines() == [" M app.py", "A  new.py"]
    # What the model was sent: the files' text, never the .env's value.
    sent = [json.dumps(r.body) for r in fake.requests]
    assert any("not committed" in body for body in sent)
    assert not any(SECRET in body for body in sent)
    assert item["files"] == []  # the copied files are ignored: never part of its change


async def test_the_setup_command_runs_sandboxed_before_the_agent(
    fake: FakeAnthropic, root: Path
) -> None:
    make_repository(root, {"app.py": "x = 0\n", ".gitignore": "setup.log\n"})
    fake.script_for(
        "Check setup.",
        reply(tool_use("bash", {"command": "cat setup.log"})),
        reply(text("Checked.")),
    )
    settings = {"background": {"setup": "echo provisioned > setup.log"}}  # the group (issue 38)
    async with editor(root, fake.url, settings=settings) as client:
        started = await client.command("agent.runInBackground", {"task": "Check setup."})
        item = await wait_for_status(lambda: tasks(client), started["id"], {"done", "error"})
    assert item["status"] == "done", item
    assert (Path(started["worktree"]) / "setup.log").read_text() == "provisioned\n"
    log = Path(item["log"]).read_text().splitlines()
    kinds = [json.loads(line)["type"] for line in log]
    assert kinds.index("setup") < kinds.index("step")
    assert "provisioned" in json.dumps(fake.requests[-1].body)


@pytest.mark.parametrize("where", ["the settings file", "the editor"])
async def test_a_command_a_rule_asks_about_is_left_for_the_review(
    fake: FakeAnthropic, root: Path, tmp_path: Path, where: str
) -> None:
    make_repository(root, {"app.py": "x = 0\n"})
    rules = {"permissions": {"ask": ["Bash(git push:*)"]}}
    if where == "the settings file":
        config = tmp_path / "config" / "agentls"
        config.mkdir(parents=True)
        (config / "settings.json").write_text(json.dumps(rules))
    fake.script_for(
        "Push it.",
        reply(tool_use("bash", {"command": "git push origin main"})),
        reply(text("Left the push for you.")),
    )
    initialization = rules if where == "the editor" else None
    async with editor(root, fake.url, initialization=initialization) as client:
        started = await client.command("agent.runInBackground", {"task": "Push it."})
        item = await wait_for_status(lambda: tasks(client), started["id"], {"done", "failed"})
    assert item["status"] == "done", item
    told = json.dumps(fake.requests[-1].body)
    assert "Nobody can be asked while a background task runs" in told
    assert "left for the user" in told


async def test_the_queue_runs_at_most_max_running_and_cancel_ends_a_task(
    fake: FakeAnthropic, root: Path
) -> None:
    make_repository(root, {"app.py": "x = 0\n"})
    go = threading.Event()
    fake.script_for("First.", gated(go, reply(text("First done."))))
    fake.script_for("Second.", reply(text("Second done.")))
    fake.script_for("Third.", gated(threading.Event(), reply(text("never"))))
    async with editor(root, fake.url, settings={"background": {"maxRunning": 1}}) as client:
        first = await client.command("agent.runInBackground", {"task": "First."})
        await wait_for_status(lambda: tasks(client), first["id"], {"running"})
        second = await client.command("agent.runInBackground", {"task": "Second."})
        await wait_for_status(lambda: tasks(client), second["id"], {"queued"})
        listed = {i["id"]: i["status"] for i in await tasks(client)}
        assert listed == {first["id"]: "running", second["id"]: "queued"}
        go.set()
        await wait_for_status(lambda: tasks(client), second["id"], {"done"})
        third = await client.command("agent.runInBackground", {"task": "Third."})
        await wait_for_status(lambda: tasks(client), third["id"], {"running"})
        assert await client.command("agent.cancelBackgroundTask", {"id": third["id"]}) == {
            "cancelled": True
        }
        item = await wait_for_status(lambda: tasks(client), third["id"], {"cancelled"})
    assert item["error"] is None


async def test_cancel_ends_the_command_the_task_runs(fake: FakeAnthropic, root: Path) -> None:
    make_repository(root, {"app.py": "x = 0\n"})
    seconds = unique_seconds()
    fake.script_for(
        "Wait long.",
        reply(tool_use("bash", {"command": f"sleep {seconds}"})),
        reply(text("never")),
    )
    async with editor(root, fake.url) as client:
        started = await client.command("agent.runInBackground", {"task": "Wait long."})
        deadline = time.monotonic() + 60
        while not running_argv("sleep", seconds):
            assert time.monotonic() < deadline, "the command never started"
            await asyncio.sleep(0.1)
        await client.command("agent.cancelBackgroundTask", {"id": started["id"]})
        item = await wait_for_status(lambda: tasks(client), started["id"], {"cancelled"})
    assert item["status"] == "cancelled"
    deadline = time.monotonic() + 10
    while running_argv("sleep", seconds):
        assert time.monotonic() < deadline, "the task's command outlived its cancel"
        await asyncio.sleep(0.1)
