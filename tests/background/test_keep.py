"""`background.keepDays`: a task that ended longer ago is removed (worktree, branch, record)
when tasks are next listed; one that runs, or ended recently, stays."""

from __future__ import annotations

import time
from pathlib import Path

from agentls.background import control, records
from agentls.background.records import Status, TaskRecord
from background_tasks import git, make_repository


def _task(root: Path, task_id: str, status: str, ended: float | None) -> records.Entry:
    folder = records.tasks_folder(root) / task_id
    git(root, "branch", f"agentls/background/{task_id}")
    record = TaskRecord(
        id=task_id,
        task="t",
        message="t",
        root=str(root),
        branch=f"agentls/background/{task_id}",
        base="HEAD",
        tree=str(folder / "tree"),
        created=time.time() - 30 * 86400,
    )
    entry = records.create(root, record, Status(status=status, ended=ended, pid=None))
    (folder / "tree").mkdir()
    return entry


def test_clean_removes_only_what_ended_before_the_limit(root: Path) -> None:
    make_repository(root, {"a.py": "a = 0\n"})
    old = _task(root, "old", "done", time.time() - 8 * 86400)
    recent = _task(root, "recent", "failed", time.time() - 86400)
    assert control.clean(root, 7) == ["old"]
    assert not old.folder.exists()
    assert recent.folder.is_dir()
    assert "agentls/background/old" not in git(root, "branch", "--list")
    assert "agentls/background/recent" in git(root, "branch", "--list")
    assert [e.record.id for e in records.listing(root.resolve())] == ["recent"]
