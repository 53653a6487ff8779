"""Checkpoints off the critical path: an edit records its file at once and the tree later;
trees of any size; a git workspace starts from its own index, never trusting more of it
than git would."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import threading
from pathlib import Path

from agentls.history.checkpoints import ShadowRepository, WorkspaceCheckpoints
from agentls.history.undo import undo
from agentls.interfaces import CheckpointMark
from doubles import MemoryEditor, ScriptedModel, call, make_agent, say

OLD_LIMIT = 50_000
"""More new files than this at once and a checkpoint used to be refused: no undo at all."""


def edit_task(root: Path, repository: ShadowRepository) -> tuple[object, object]:
    model = ScriptedModel(
        call("edit_file", path="app.py", old_text="one", new_text="two"), say("done")
    )
    agent, progress = make_agent(root, model)
    agent.checkpoints = WorkspaceCheckpoints(repository)
    return agent, progress


async def test_an_edit_is_undone_on_a_tree_over_the_old_size_limit(
    root: Path, tmp_path: Path
) -> None:
    (root / "app.py").write_text("one\n")
    (root / "seed.txt").write_text("the same\n")
    folder = root / "many"
    folder.mkdir()
    for number in range(OLD_LIMIT + 1):
        os.link(root / "seed.txt", folder / f"{number}.txt")
    repository = ShadowRepository(root, tmp_path / "shadow")
    agent, _ = edit_task(root, repository)
    result = await agent.run("edit it")  # type: ignore[attr-defined]
    assert result.status == "done" and (root / "app.py").read_text() == "two\n"

    undone = await undo(repository, MemoryEditor(root), None, (), "s", 2)
    assert (root / "app.py").read_text() == "one\n"
    assert (undone.restored, undone.removed, undone.conflicts) == (["app.py"], [], [])
    assert len(os.listdir(folder)) == OLD_LIMIT + 1


class SlowToLook(ShadowRepository):
    """A repository whose look at the whole tree waits until the test lets it."""

    def __init__(self, root: Path, folder: Path) -> None:
        super().__init__(root, folder)
        self.gate = threading.Event()
        self.looking = threading.Event()

    def _snapshot(self) -> tuple[str, list[str]]:
        self.looking.set()
        assert self.gate.wait(60)
        return super()._snapshot()


async def test_an_edit_waits_for_no_whole_tree_record_and_is_still_undone(
    root: Path, tmp_path: Path
) -> None:
    (root / "app.py").write_text("one\n")
    (root / "other.py").write_text("kept\n")
    repository = SlowToLook(root, tmp_path / "shadow")
    agent, _ = edit_task(root, repository)
    running = asyncio.ensure_future(agent.run("edit it"))  # type: ignore[attr-defined]
    while (root / "app.py").read_text() != "two\n":
        await asyncio.sleep(0.01)
    # The edit landed while the task's record still waits to look at the tree, which will
    # see the edited file: the record must keep the file as it was before the edit.
    assert repository.looking.is_set() and not repository.gate.is_set()
    repository.gate.set()
    assert (await running).status == "done"
    kinds = [c.kind for c in repository.checkpoints()]
    assert kinds == ["task", "step", "end"]

    undone = await undo(repository, MemoryEditor(root), None, (), "s", 2)
    assert undone.restored == ["app.py"] and (root / "app.py").read_text() == "one\n"
    assert (root / "other.py").read_text() == "kept\n"


def git(root: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@x", *arguments],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


async def test_a_git_workspace_starts_from_its_index_and_trusts_no_more_than_git(
    root: Path, tmp_path: Path
) -> None:
    for number in range(200):
        (root / f"f{number}.txt").write_text(f"file {number}\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    # A lying entry (another file's blob; its stat data cannot match) and an entry git is
    # told never to check: neither may stand for the file on disk.
    other = git(root, "rev-parse", "HEAD:f1.txt").strip()
    git(root, "update-index", "--cacheinfo", f"100644,{other},f0.txt")
    (root / "f2.txt").write_text("changed behind git's back\n")
    git(root, "update-index", "--assume-unchanged", "f2.txt")
    (root / "new.txt").write_text("untracked\n")
    repository = ShadowRepository(root, tmp_path / "shadow")
    first = repository.record(
        CheckpointMark(kind="task", session="s", task=1, step=None, label="first")
    )

    listed = subprocess.run(
        ["git", f"--git-dir={repository.git_dir}", "ls-tree", "-r", first.tree],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    recorded = {line.split("\t")[1]: line.split()[2] for line in listed}
    assert len(recorded) == 201
    for name in ("f0.txt", "f2.txt", "new.txt", "f150.txt"):
        assert recorded[name] == blob_id((root / name).read_bytes()), name
    # Only what changed was hashed into the shadow's own store: the rest is the index's.
    loose = [p for p in (repository.git_dir / "objects").rglob("*") if p.is_file()]
    assert len([p for p in loose if p.parent.name != "info"]) < 20

    # A command changes a tracked file nobody edited: undo brings it back from the
    # repository's own store.
    repository.record(CheckpointMark(kind="step", session="s", task=1, step=1, label="bash: x"))
    (root / "f150.txt").write_text("overwritten\n")
    repository.record(CheckpointMark(kind="end", session="s", task=1, step=None, label="first"))
    undone = await undo(repository, MemoryEditor(root), None, (), "s", 2)
    assert undone.restored == ["f150.txt"]
    assert (root / "f150.txt").read_text() == "file 150\n"
