"""Checkpoints in the shadow repository, and undo back to them: in process, on real files."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from agentls.disk import safe_git
from agentls.disk.files import TEMPORARY_NAME
from agentls.history import checkpoints
from agentls.history.checkpoints import CheckpointError, ShadowRepository
from agentls.history.undo import apply, default_target, listing, plan, undo
from agentls.interfaces import CheckpointMark
from doubles import MemoryEditor


def tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def repository(root: Path, tmp_path: Path) -> ShadowRepository:
    return ShadowRepository(root, tmp_path / "shadow")


def task(repository: ShadowRepository, number: int, title: str = "a task") -> int:
    return repository.record(
        CheckpointMark(kind="task", session="s1", task=number, step=None, label=title)
    ).id


def step(repository: ShadowRepository, number: int, at: int) -> None:
    repository.record(
        CheckpointMark(kind="step", session="s1", task=number, step=at, label="bash: x")
    )


def end(repository: ShadowRepository, number: int) -> None:
    repository.record(
        CheckpointMark(kind="end", session="s1", task=number, step=None, label="a task")
    )


async def test_undo_puts_back_an_edit_and_removes_a_file_a_command_created(
    root: Path, repository: ShadowRepository
) -> None:
    (root / "app.py").write_text("print('hi')\n")
    (root / "gone.txt").write_text("keep me\n")
    (root / "tool.sh").write_text("echo\n")
    os.chmod(root / "tool.sh", 0o755)
    start = task(repository, 1)
    step(repository, 1, 1)
    (root / "app.py").write_text("print('bye')\n")
    step(repository, 1, 2)
    (root / "made.txt").write_text("by bash\n")
    (root / "gone.txt").unlink()
    (root / "tool.sh").unlink()
    end(repository, 1)

    result = await undo(repository, MemoryEditor(root), None, (), "s1", 1)

    assert result.target.id == start
    assert (root / "app.py").read_text() == "print('hi')\n"
    assert not (root / "made.txt").exists()
    assert (root / "gone.txt").read_text() == "keep me\n"
    assert os.stat(root / "tool.sh").st_mode & 0o111
    assert sorted(result.restored) == ["app.py", "gone.txt", "tool.sh"]
    assert result.removed == ["made.txt"] and result.conflicts == []
    assert "app.py" in result.note() and "made.txt" in result.note()


async def test_a_file_the_user_changed_since_is_a_conflict_until_they_say_so(
    root: Path, repository: ShadowRepository
) -> None:
    (root / "a.py").write_text("one\n")
    (root / "mine.py").write_text("user\n")
    task(repository, 1)
    step(repository, 1, 1)
    (root / "a.py").write_text("agent\n")
    end(repository, 1)
    (root / "a.py").write_text("agent, then the user\n")
    (root / "mine.py").write_text("only the user\n")

    result = await undo(repository, MemoryEditor(root), None, (), "s1", 1)
    assert result.conflicts == ["a.py"] and result.restored == []
    assert (root / "a.py").read_text() == "agent, then the user\n"
    # Only the user changed it: undo never touches it.
    assert (root / "mine.py").read_text() == "only the user\n"

    again = await undo(repository, MemoryEditor(root), result.target.id, ["a.py"], "s1", 1)
    assert again.restored == ["a.py"] and (root / "a.py").read_text() == "one\n"


async def test_open_files_change_through_the_editor_and_unsaved_typing_is_a_conflict(
    root: Path, repository: ShadowRepository
) -> None:
    for name in ("open.py", "typed.py", "new.py"):
        (root / name).write_text("before\n")
    task(repository, 1)
    step(repository, 1, 1)
    for name in ("open.py", "typed.py"):
        (root / name).write_text("after\n")
    (root / "new.py").unlink()
    (root / "created.py").write_text("made\n")
    end(repository, 1)
    editor = MemoryEditor(root)
    editor.open = {
        root / "open.py": "after\n",
        root / "typed.py": "after, and unsaved typing\n",
        root / "created.py": "made\n",
    }

    result = await undo(repository, editor, None, (), "s1", 1)

    assert [c.path.name for c in editor.proposals] == ["open.py"]
    assert editor.proposals[0].tool == "undo" and editor.proposals[0].new_text == "before\n"
    assert editor.open[root / "open.py"] == "before\n"
    assert result.conflicts == ["typed.py"]
    assert sorted(result.restored) == ["new.py", "open.py"]
    assert result.removed == ["created.py"] and root / "created.py" not in editor.open


async def test_a_review_that_rejects_the_undo_is_reported_as_declined(
    root: Path, repository: ShadowRepository
) -> None:
    (root / "a.py").write_text("before\n")
    task(repository, 1)
    step(repository, 1, 1)
    (root / "a.py").write_text("after\n")
    editor = MemoryEditor(root)
    editor.open = {root / "a.py": "after\n"}
    editor.review = lambda change: [False] * len(change.hunks)
    result = await undo(repository, editor, None, (), "s1", 1)
    assert result.declined == ["a.py"] and (root / "a.py").read_text() == "after\n"


async def test_an_undo_can_be_undone_and_the_default_moves_to_the_task_before(
    root: Path, repository: ShadowRepository
) -> None:
    (root / "a.py").write_text("0\n")
    first = task(repository, 1)
    step(repository, 1, 1)
    (root / "a.py").write_text("1\n")
    end(repository, 1)
    second = task(repository, 2)
    step(repository, 2, 1)
    (root / "a.py").write_text("2\n")
    end(repository, 2)

    assert (await undo(repository, MemoryEditor(root), None, (), "s1", 2)).target.id == second
    assert (root / "a.py").read_text() == "1\n"
    assert default_target(repository.checkpoints()).id == first  # type: ignore[union-attr]
    assert (await undo(repository, MemoryEditor(root), None, (), "s1", 2)).target.id == first
    assert (root / "a.py").read_text() == "0\n"
    # Back to before the last undo: the undo itself is undone.
    last_undo = [c for c in repository.checkpoints() if c.kind == "undo"][-1]
    await undo(repository, MemoryEditor(root), last_undo.id, (), "s1", 2)
    assert (root / "a.py").read_text() == "1\n"


async def test_ignored_and_large_files_are_never_touched_and_a_later_ignore_rule_hides_nothing(
    root: Path, repository: ShadowRepository
) -> None:
    (root / ".gitignore").write_text("build/\n")
    (root / "a.py").write_text("a\n")
    (root / "big.bin").write_bytes(b"x" * (checkpoints.MAX_FILE_BYTES + 1))
    task(repository, 1)
    step(repository, 1, 1)
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("object\n")
    (root / "big.bin").write_bytes(b"y" * (checkpoints.MAX_FILE_BYTES + 2))
    (root / "huge.bin").write_bytes(b"z" * (checkpoints.MAX_FILE_BYTES + 1))
    # A rule written after the checkpoint: a.py was recorded, so undo still sees it.
    (root / ".gitignore").write_text("build/\n*.py\n")
    (root / "a.py").write_text("changed\n")
    (root / "b.py").write_text("new, but ignored when it appeared\n")
    end(repository, 1)

    result = await undo(repository, MemoryEditor(root), None, (), "s1", 1)

    assert sorted(result.restored) == [".gitignore", "a.py"]
    assert (root / "a.py").read_text() == "a\n"
    assert (root / "build" / "out.o").exists() and (root / "huge.bin").exists()
    assert (root / "big.bin").read_bytes()[:1] == b"y"


async def test_files_a_gitignore_written_by_the_agent_hid_are_listed_after_undo(
    root: Path, repository: ShadowRepository
) -> None:
    (root / "a.py").write_text("a\n")
    task(repository, 1)
    step(repository, 1, 1)
    (root / ".gitignore").write_text("hidden.txt\n")
    step(repository, 1, 2)
    (root / "hidden.txt").write_text("made under the new rule\n")
    end(repository, 1)
    result = await undo(repository, MemoryEditor(root), None, (), "s1", 1)
    assert result.removed == [".gitignore"]
    assert result.unrecorded == ["hidden.txt"] and (root / "hidden.txt").exists()
    assert "hidden.txt" in result.note()


async def test_files_are_recorded_byte_for_byte_whatever_gitattributes_say(
    root: Path, repository: ShadowRepository
) -> None:
    (root / ".gitattributes").write_text("* text eol=lf ident\n")
    (root / "crlf.txt").write_bytes(b"one\r\n$Id: abc $\r\n")
    task(repository, 1)
    step(repository, 1, 1)
    (root / "crlf.txt").write_bytes(b"changed\n")
    await undo(repository, MemoryEditor(root), None, (), "s1", 1)
    assert (root / "crlf.txt").read_bytes() == b"one\r\n$Id: abc $\r\n"


async def test_git_runs_nothing_the_workspace_configures_and_its_git_is_untouched(
    root: Path, repository: ShadowRepository, tmp_path: Path
) -> None:
    def git(*arguments: str) -> None:
        subprocess.run(["git", *arguments], cwd=root, check=True, capture_output=True)

    git("init", "-q")
    pwned = tmp_path / "pwned"
    hook = root / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {pwned}-hook\n")
    hook.chmod(0o755)
    for name, value in {
        "core.fsmonitor": f"touch {pwned}-fsmonitor; false",
        "filter.evil.clean": f"touch {pwned}-clean; cat",
        "filter.evil.smudge": f"touch {pwned}-smudge; cat",
        "filter.evil.required": "true",
        "diff.evil.textconv": f"touch {pwned}-textconv; cat",
        "core.pager": f"touch {pwned}-pager; cat",
        "alias.ls-files": f"!touch {pwned}-alias",
    }.items():
        git("config", name, value)
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (root / "a.py").write_text("a\n")
    git_before = tree_hash(root / ".git")

    task(repository, 1)
    step(repository, 1, 1)
    (root / "a.py").write_text("b\n")
    result = await undo(repository, MemoryEditor(root), None, (), "s1", 1)

    assert result.restored == ["a.py"]
    assert list(tmp_path.glob("pwned*")) == []
    assert tree_hash(root / ".git") == git_before
    recorded = repository.git("ls-files", "-z").decode().split("\0")
    assert not any(p.startswith(".git/") for p in recorded)
    assert os.stat(repository.git_dir).st_mode & 0o777 == 0o700


async def test_listing_names_each_target_with_its_task_and_the_files_that_differ_now(
    root: Path, repository: ShadowRepository
) -> None:
    (root / "a.py").write_text("a\n")
    task(repository, 1, "fix the bug")
    step(repository, 1, 2)
    (root / "a.py").write_text("b\n")
    end(repository, 1)
    listed = listing(repository)
    assert [(c["kind"], c["task"], c["step"], c["files"]) for c in listed] == [
        ("step", "fix the bug", 2, ["a.py"]),
        ("task", "fix the bug", None, ["a.py"]),
    ]


def test_no_task_to_undo_and_an_unknown_checkpoint_are_errors(
    repository: ShadowRepository,
) -> None:
    assert listing(repository) == []
    assert not (repository.git_dir / "index").exists()  # nothing recorded just to list
    with pytest.raises(CheckpointError, match="no task to undo"):
        plan(repository, None)
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        plan(repository, 42)


async def test_a_path_that_now_leads_out_of_the_root_is_not_written(
    root: Path, repository: ShadowRepository, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "sub").mkdir()
    (root / "sub" / "a.py").write_text("a\n")
    task(repository, 1)
    step(repository, 1, 1)
    (root / "sub" / "a.py").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside)
    undo_plan = plan(repository, None)
    result = await apply(repository, undo_plan, MemoryEditor(root))
    # The link itself goes (never what it points to), and the folder comes back in the root.
    assert (result.removed, result.restored, result.declined) == (["sub"], ["sub/a.py"], [])
    assert list(outside.iterdir()) == [] and not (root / "sub").is_symlink()
    assert (root / "sub" / "a.py").read_text() == "a\n"


def test_state_kept_inside_the_workspace_is_not_recorded(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(root / ".local" / "state"))
    (root / "a.py").write_text("a\n")
    repository = ShadowRepository(root)
    repository.record(CheckpointMark(kind="task", session="s1", task=1, step=None, label="t"))
    repository.record(CheckpointMark(kind="step", session="s1", task=1, step=1, label="t"))
    assert repository.git("ls-files").decode().split() == ["a.py"]


def test_a_file_half_written_by_an_edit_is_never_recorded(repository: ShadowRepository) -> None:
    # The task's whole-tree record runs in the background while the first edit lands: it
    # may see the edit's temporary file, which undo would then bring back.
    (repository.root / "app.py").write_text("x = 1\n")
    temporary = TEMPORARY_NAME.format(name="app.py", token="41580c01516e")
    (repository.root / temporary).write_text("x = 2\n")
    repository.record(CheckpointMark(kind="task", session="s1", task=1, step=None, label="t"))
    assert repository.git("ls-files").decode().split() == ["app.py"]


def test_a_git_that_hangs_costs_the_checkpoint_not_the_task(
    repository: ShadowRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "GIT_TIMEOUT", 0.2)
    monkeypatch.setattr(
        safe_git, "safe_git_command", lambda arguments: ["sleep", "5", *arguments[:0]]
    )
    with pytest.raises(CheckpointError, match=r"took over 0\.2 s"):
        repository.record(CheckpointMark(kind="task", session="s1", task=1, step=None, label="t"))


def test_ids_follow_the_newest_checkpoint_however_long_its_line(
    repository: ShadowRepository,
) -> None:
    repository.record(CheckpointMark(kind="task", session="s1", task=1, step=None, label="t"))
    repository.record(
        CheckpointMark(kind="step", session="s1", task=1, step=1, label="bash: " + "x" * 200_000)
    )
    with open(repository.log_path, "a") as log:
        log.write('{"id": 99, "cut by a cra')
    assert (
        repository.record(CheckpointMark(kind="end", session="s1", task=1, step=None, label="t")).id
        == 3
    )
    assert [c.id for c in repository.checkpoints()] == [1, 2, 3]


async def test_what_the_user_changed_during_an_edit_review_stays_theirs(
    root: Path, repository: ShadowRepository
) -> None:
    (root / "edited.py").write_text("before\n")
    (root / "typed.py").write_text("mine\n")
    task(repository, 1)
    repository.record(
        CheckpointMark(
            kind="step",
            session="s1",
            task=1,
            step=1,
            label="edit_file: edited.py",
            touches=["edited.py"],
        )
    )
    (root / "edited.py").write_text("after\n")
    (root / "typed.py").write_text("mine, saved during the review\n")
    end(repository, 1)
    result = await undo(repository, MemoryEditor(root), None, (), "s1", 1)
    assert result.restored == ["edited.py"]
    assert (root / "typed.py").read_text() == "mine, saved during the review\n"
