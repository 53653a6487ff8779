"""Issue 38, BG1 and BG2: a background task whose model replaced a tracked link to a folder
outside the workspace with a folder (and more of the kind), reviewed through each door. The
editor is never sent a path through a link, nothing outside the workspace changes, and the
review goes on with the files after the declined ones, saying why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from background_tasks import make_repository, wait_for_status
from editor_client import EditorClient
from fake_api import FakeAnthropic, reply, text, tool_use
from pygls.uris import to_fs_path

TASK = "Tidy the tree."
COMMAND = (
    "rm out && mkdir out && printf 'x\\n' > out/x.txt"  # the link made a folder
    " && rm a/b && mkdir -p a/b/c && printf 'c\\n' > a/b/c/x.txt"  # a nested one too
    " && printf 'y2\\n' > d/y.txt && rm d/w.txt"  # where the user will put a link
    " && rm app.txt && ln -s ../outside/keep.txt app.txt"  # a file made a link
    " && printf 'z\\n' > z.txt"  # and a file that lands
)


def repository(root: Path, fake: FakeAnthropic) -> Path:
    """The user's repository, tracking `out -> ../outside` and `a/b -> ../../outside`; the
    task scripted to do COMMAND. The folder outside the workspace."""
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    os.symlink("../outside", root / "out")
    (root / "a").mkdir()
    os.symlink("../../outside", root / "a" / "b")
    texts = {"a/keep.txt": "a\n", "d/y.txt": "y\n", "d/w.txt": "w\n", "app.txt": "app\n"}
    make_repository(root, texts)
    fake.script_for(
        TASK, reply(tool_use("bash", {"command": COMMAND})), reply(text("Tidied the tree."))
    )
    return outside


def swap_d_for_a_link(root: Path) -> Path:
    """Meanwhile the user moved `d` out of the workspace and left a link in its place."""
    moved = root.parent / "moved"
    shutil.move(root / "d", moved)
    os.symlink("../moved", root / "d")
    return moved


def nothing_changed_outside(root: Path, outside: Path, moved: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "keep\n"
    assert (moved / "y.txt").read_text() == "y\n" and (moved / "w.txt").read_text() == "w\n"
    assert not (root / "app.txt").is_symlink() and (root / "app.txt").read_text() == "app\n"
    assert (root / "out").is_symlink() and (root / "a" / "b").is_symlink()


def _sent_paths(client: EditorClient) -> list[Path]:
    """Every path the editor was sent to create, change or delete."""
    paths = []
    for params in client.edit_requests:
        for operation in params.edit.document_changes or []:
            uri = getattr(operation, "uri", None) or operation.text_document.uri  # type: ignore[union-attr]
            paths.append(Path(to_fs_path(uri) or ""))
    return paths


def _through_a_link(root: Path, path: Path) -> bool:
    """Whether `path` (under `root`) is, or lies beyond, a link."""
    here = root
    for part in path.relative_to(root).parts:
        here = here / part
        if here.is_symlink():
            return True
    return False


async def test_bg1_the_editor_is_never_sent_a_path_through_a_link(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    outside = repository(root, fake)
    started = await lsp_editor.command("agent.runInBackground", {"task": TASK})
    listed = lambda: lsp_editor.command("agent.backgroundTasks")  # noqa: E731
    item = await wait_for_status(listed, started["id"], {"done", "failed", "error"})
    assert item["status"] == "done", item
    moved = swap_d_for_a_link(root)
    lsp_editor.open(root / "d" / "w.txt")  # open by its path through the link

    result = await lsp_editor.command("agent.reviewBackgroundTask", {"id": started["id"]})

    sent = _sent_paths(lsp_editor)
    assert [p for p in sent if _through_a_link(root, p)] == []
    assert all(p.resolve().is_relative_to(root.resolve()) for p in sent)
    assert sent == [root / "z.txt", root / "z.txt"]  # its CreateFile and its text
    nothing_changed_outside(root, outside, moved)
    assert (root / "z.txt").read_text() == "z\n"
    by_path: dict[str, dict[str, Any]] = {f["path"]: f for f in result["files"]}
    assert by_path["z.txt"]["accepted"] == 1 and by_path["z.txt"]["declined"] is False
    declined = {p: f["reason"] for p, f in by_path.items() if f["declined"]}
    assert sorted(declined) == [
        *("a/b", "a/b/c/x.txt", "app.txt", "d/w.txt", "d/y.txt", "out", "out/x.txt")
    ]
    assert declined["out"].startswith(
        "out was a link to ../outside when the task started, and the task replaced it with a folder"
    )
    assert declined["out/x.txt"].startswith("out was a link to ../outside")
    assert declined["d/w.txt"].startswith("d is a link to ../moved in your files")
    shown = [
        m["params"]["message"]
        for m in lsp_editor.received
        if m.get("method") == "window/showMessage"
    ]
    assert any(
        f"left on the branch {result['branch']}" in m and "out/x.txt (out was a link" in m
        for m in shown
    ), shown


def agentls(root: Path, env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls", *arguments],
        cwd=root,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_bg2_the_terminal_declines_says_why_and_reviews_the_rest(
    fake: FakeAnthropic, root: Path
) -> None:
    outside = repository(root, fake)
    env = {
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "XDG_CONFIG_HOME": str(root.parent / "config"),
    }
    task_id = agentls(root, env, "run", "--background", TASK).stdout.strip()
    deadline = time.monotonic() + 90
    while "done" not in (table := agentls(root, env, "tasks").stdout):
        assert time.monotonic() < deadline and "failed" not in table, table
        time.sleep(0.3)
    moved = swap_d_for_a_link(root)

    done = agentls(root, env, "tasks", "review", task_id, "--yes")

    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr  # part of the change is left on the branch
    said = done.stdout
    assert "z.txt: 1 of 1 accepted" in said
    assert (root / "z.txt").read_text() == "z\n"
    nothing_changed_outside(root, outside, moved)
    assert (
        "out/x.txt: not applied: out was a link to ../outside when the task started, and the "
        "task replaced it with a folder" in said
    )
    assert "d/y.txt: not applied: d is a link to ../moved in your files" in said
    assert f"Left on the branch agentls/background/{task_id}: a/b, a/b/c/x.txt" in said
