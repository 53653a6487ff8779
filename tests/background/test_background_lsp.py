"""Background tasks from an editor (LSP, the fake API): several at once beside a foreground
task, each in its own worktree, the user's files untouched until the review, the review hunk
by hunk with conflicts named and Undo taking it back."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from background_tasks import gated, git, make_repository, wait_for_status
from editor_client import EditorClient, editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsprotocol import types
from pygls.exceptions import JsonRpcException


def edit(path: str, old: str, new: str) -> Any:
    return reply(tool_use("edit_file", {"path": path, "old_text": old, "new_text": new}))


async def tasks(client: EditorClient) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = await client.command("agent.backgroundTasks")
    return listed


def notified(client: EditorClient, task_id: str) -> list[str]:
    """The states the client was told of for `task_id`, in order, each once."""
    states: list[str] = []
    for message in client.received:
        if message.get("method") == "agent/backgroundTask":
            params = message["params"]
            if params["id"] == task_id and (not states or states[-1] != params["status"]):
                states.append(params["status"])
    return states


async def test_two_background_tasks_run_beside_a_foreground_task(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    make_repository(root, {"a.py": "a = 0\n", "b.py": "b = 0\n", "c.py": "c = 0\n"})
    go_a, go_b, go_fore = threading.Event(), threading.Event(), threading.Event()
    fake.script_for("Set a.", gated(go_a, edit("a.py", "a = 0", "a = 1")), reply(text("A done.")))
    fake.script_for("Set b.", gated(go_b, edit("b.py", "b = 0", "b = 2")), reply(text("B done.")))
    fake.script(gated(go_fore, edit("c.py", "c = 0", "c = 3")), reply(text("C done.")))

    started_a = await lsp_editor.command("agent.runInBackground", {"task": "Set a."})
    started_b = await lsp_editor.command("agent.runInBackground", {"task": "Set b."})
    assert started_a["branch"] == f"agentls/background/{started_a['id']}"
    _, foreground = lsp_editor.start_task("Set c.")
    for started in (started_a, started_b):
        await wait_for_status(lambda: tasks(lsp_editor), started["id"], {"running"})
    listed = await tasks(lsp_editor)
    assert {i["status"] for i in listed} == {"running"}
    assert set(listed[0]) >= {"id", "task", "status", "steps", "tokens", "cost", "started"}

    go_a.set()
    go_b.set()
    for started in (started_a, started_b):
        await wait_for_status(lambda: tasks(lsp_editor), started["id"], {"done"})
    assert not foreground.done()  # it ran all along, beside them
    # Each edited its own worktree; the user's files are as they were.
    assert (Path(started_a["worktree"]) / "a.py").read_text() == "a = 1\n"
    assert (Path(started_a["worktree"]) / "b.py").read_text() == "b = 0\n"
    assert (Path(started_b["worktree"]) / "b.py").read_text() == "b = 2\n"
    assert (root / "a.py").read_text() == "a = 0\n"
    assert (root / "b.py").read_text() == "b = 0\n"
    assert git(root, "show", f"{started_a['branch']}:a.py") == "a = 1\n"
    assert git(root, "status", "--porcelain") == ""

    go_fore.set()
    answer = await foreground
    assert answer["status"] == "done"
    assert (root / "c.py").read_text() == "c = 3\n"
    await asyncio.sleep(0.6)  # one more look of the watch
    for started in (started_a, started_b):
        assert notified(lsp_editor, started["id"])[-1] == "done"
        assert "running" in notified(lsp_editor, started["id"])
    done = {i["id"]: i for i in await tasks(lsp_editor)}
    assert done[started_a["id"]]["steps"] >= 1
    assert done[started_a["id"]]["tokens"] > 0
    assert done[started_a["id"]]["files"] == ["a.py"]


SOURCE = "".join(f"line {n}\n" for n in range(1, 21))


async def test_a_review_lands_the_accepted_hunks_names_conflicts_and_is_undone(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    make_repository(root, {"app.py": SOURCE, "old.txt": "old\n"})
    new = SOURCE.replace("line 2\n", "line two\n").replace("line 10\n", "line ten\n")
    new = new.replace("line 18\n", "line eighteen\n")
    fake.script_for(
        "Rewrite.",
        reply(tool_use("write_file", {"path": "app.py", "content": new})),
        reply(tool_use("write_file", {"path": "notes.md", "content": "# Notes\n"})),
        reply(tool_use("bash", {"command": "rm old.txt"})),
        reply(text("Rewritten.")),
    )
    started = await lsp_editor.command("agent.runInBackground", {"task": "Rewrite."})
    item = await wait_for_status(lambda: tasks(lsp_editor), started["id"], {"done", "failed"})
    assert item["status"] == "done", item
    assert sorted(item["files"]) == ["app.py", "notes.md", "old.txt"]
    # Meanwhile the user changed line 18 themselves, and a line at the top.
    mine = "# mine\n" + SOURCE.replace("line 18\n", "my 18\n")
    (root / "app.py").write_text(mine)
    assert not (root / "notes.md").exists()

    # The user keeps the first hunk (line 2) and rejects the second (line 10).
    lsp_editor.review = lambda uri, edits: [True, False] if len(edits) == 2 else [True] * len(edits)
    result = await lsp_editor.command("agent.reviewBackgroundTask", {"id": started["id"]})
    by_path = {f["path"]: f for f in result["files"]}
    assert by_path["app.py"]["hunks"] == 3 and by_path["app.py"]["accepted"] == 1
    assert by_path["app.py"]["conflicts"] == [
        "change of line 18 of app.py: you changed those lines since the task started"
    ]
    assert result["conflicts"] == by_path["app.py"]["conflicts"]
    assert (root / "app.py").read_text() == mine.replace("line 2\n", "line two\n")
    assert (root / "notes.md").read_text() == "# Notes\n"
    assert not (root / "old.txt").exists()
    assert by_path["old.txt"]["kind"] == "delete" and by_path["old.txt"]["accepted"] == 1
    assert any("conflicts" in m for m in _shown(lsp_editor))
    listed = {i["id"]: i for i in await tasks(lsp_editor)}
    assert listed[started["id"]]["reviewed"] is True
    assert not Path(started["worktree"]).exists()  # reviewed: its tree is gone, not its branch

    undone = await lsp_editor.command("agent.undo")
    assert sorted(undone["restored"]) == ["app.py", "old.txt"], undone
    assert undone["removed"] == ["notes.md"]
    assert (root / "app.py").read_text() == mine
    assert (root / "old.txt").read_text() == "old\n"
    assert not (root / "notes.md").exists()


def _shown(client: EditorClient) -> list[str]:
    return [
        m["params"]["message"] for m in client.received if m.get("method") == "window/showMessage"
    ]


async def test_discard_removes_the_worktree_and_the_branch(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    make_repository(root, {"a.py": "a = 0\n"})
    fake.script_for("Set a.", edit("a.py", "a = 0", "a = 1"), reply(text("A done.")))
    started = await lsp_editor.command("agent.runInBackground", {"task": "Set a."})
    await wait_for_status(lambda: tasks(lsp_editor), started["id"], {"done"})
    assert Path(started["worktree"]).is_dir()
    # Issue 40, row 8: the editors' Open Log showed the raw JSONL; now the server's text.
    log = await lsp_editor.command("agent.backgroundTaskLog", {"id": started["id"]})
    lines = log["text"].splitlines()
    assert lines[0] == f"Background task {started['id']}: Set a."
    assert lines[1].startswith("done · 2 steps")
    assert "▸ edit_file: a.py" in lines and lines[-1] == "A done."
    assert '"type"' not in log["text"]
    assert await lsp_editor.command("agent.discardBackgroundTask", {"id": started["id"]}) == {
        "discarded": True
    }
    assert not Path(started["worktree"]).exists()
    assert started["branch"] not in git(root, "branch", "--list", "agentls/*")
    assert await tasks(lsp_editor) == []
    assert "worktree" not in git(root, "worktree", "list").split("\n", 1)[-1]


async def test_the_active_file_goes_along_and_a_folder_without_git_is_refused(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    with pytest.raises(JsonRpcException, match="git repository"):
        await lsp_editor.command("agent.runInBackground", {"task": "Set a."})
    make_repository(root, {"a.py": "a = 0\n"})
    fake.script_for("Look at it.", reply(text("Looked.")))
    uri = lsp_editor.open(root / "a.py")
    started = await lsp_editor.command("agent.runInBackground", {"task": "Look at it.", "uri": uri})
    await wait_for_status(lambda: tasks(lsp_editor), started["id"], {"done"})
    assert "Open file: a.py" in json.dumps(fake.requests[-1].body)


@pytest.mark.parametrize(("answer", "written"), [("Allow", True), ("Deny", False)])
async def test_a_review_in_an_editor_without_apply_edit_asks_before_writing(
    fake: FakeAnthropic, root: Path, answer: str, written: bool
) -> None:
    """An editor that cannot show the review (no workspace/applyEdit): each file is put to
    the user as a question by the permission gate, and written only once allowed."""
    make_repository(root, {"app.py": SOURCE})
    fake.script_for(
        "Note it.",
        reply(tool_use("write_file", {"path": "notes.md", "content": "# Notes\n"})),
        reply(text("Noted.")),
    )

    def no_apply_edit(capabilities: types.ClientCapabilities) -> None:
        assert capabilities.workspace is not None
        capabilities.workspace.apply_edit = False

    async with editor(root, fake.url, capabilities=no_apply_edit) as client:
        started = await client.command("agent.runInBackground", {"task": "Note it."})
        item = await wait_for_status(lambda: tasks(client), started["id"], {"done", "failed"})
        assert item["status"] == "done", item
        client.approvals = [answer]
        result = await client.command("agent.reviewBackgroundTask", {"id": started["id"]})
    assert client.approval_requests == [
        "The agent wants to create notes.md (insertion before line 1)"
    ]
    (notes,) = result["files"]
    assert notes["accepted"] == (1 if written else 0)
    assert (root / "notes.md").exists() is written
