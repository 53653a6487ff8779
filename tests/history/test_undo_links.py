"""Undo acts at the recorded path exactly, never through a link (issue 27, row U1).

A link on the way to a file declines that file and says why; the other files are restored.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentls.history.checkpoints import ShadowRepository
from agentls.history.undo import apply, plan
from agentls.interfaces import CheckpointKind, CheckpointMark
from doubles import MemoryEditor
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use

USERS = "the user's own\n"


def record(repository: ShadowRepository, kind: CheckpointKind, step: int | None = None) -> None:
    label = "bash: x" if kind == "step" else "a task"
    repository.record(CheckpointMark(kind=kind, session="s1", task=1, step=step, label=label))


def swap_for_link(folder: Path, target: str) -> None:
    """`folder` becomes a link to `target`; what it held stays in `<folder>.moved`."""
    folder.rename(folder.with_name(folder.name + ".moved"))
    folder.symlink_to(target)


@pytest.mark.parametrize("open_in_editor", [False, True], ids=["on-disk", "open-in-editor"])
@pytest.mark.parametrize("name", ["a/x.txt", "a/sub/x.txt"], ids=["folder", "missing-parent"])
async def test_u1_a_folder_link_hidden_by_gitignore_is_never_written_through(
    fake: FakeAnthropic, root: Path, name: str, open_in_editor: bool
) -> None:
    """The review's U1: the agent's command swaps folder `a` for a link to the user's `b`,
    hidden by a `.gitignore`; undo must not put `a/x.txt` back into `b`."""
    (root / name).parent.mkdir(parents=True)
    (root / name).write_text("a's old text\n")
    (root / "b").mkdir()
    (root / "b" / "x.txt").write_text(USERS)
    (root / "c.txt").write_text("c\n")
    command = "rm -r a && ln -s b a && printf 'a\\n' > .gitignore && echo changed > c.txt"
    fake.script(reply(tool_use("bash", {"command": command})), reply(text("Done.")))
    async with editor(root, fake.url) as client:
        if open_in_editor:
            client.open(root / name, language="plaintext")
        await client.run_task("tidy up")
        assert (root / "a").is_symlink()
        result = await client.command("agent.undo")
        proposed = [r.label for r in client.edit_requests]
        await client.run_task("what now?")

    assert (root / "b" / "x.txt").read_text() == USERS
    assert sorted((root / "b").iterdir()) == [root / "b" / "x.txt"]  # no b/sub made either
    assert (root / "c.txt").read_text() == "c\n"  # the other files are restored
    assert result["declined"] == [name]
    why = "not restored: a is a link to b; put it back by hand"
    assert result["reasons"] == {name: why}
    assert f"not undone: {name} ({why})" in result["outcome"]
    assert not any(name in label for label in proposed)  # never proposed to the editor
    told = [b.get("text", "") for m in fake.requests[-1].body["messages"] for b in m["content"]]
    assert any(f"{name} ({why})" in t for t in told)


def _restore_through_a_swapped_folder(root: Path, repository: ShadowRepository) -> Any:
    """A plan that puts `a/x.txt` back, made while `a` was a folder."""
    (root / "a").mkdir()
    (root / "a" / "x.txt").write_text("a's old text\n")
    record(repository, "task")
    record(repository, "step", 1)
    (root / "a" / "x.txt").unlink()
    return plan(repository, None)


def _remove_through_a_swapped_folder(root: Path, repository: ShadowRepository) -> Any:
    """A plan that removes `a/x.txt`, made by the agent while `a` was a folder."""
    (root / "a").mkdir()
    record(repository, "task")
    record(repository, "step", 1)
    (root / "a" / "x.txt").write_text("the agent's\n")
    return plan(repository, None)


@pytest.mark.parametrize(
    "make_plan",
    [_restore_through_a_swapped_folder, _remove_through_a_swapped_folder],
    ids=["restore", "removal"],
)
async def test_a_folder_swapped_for_a_link_after_the_plan_declines_the_file(
    root: Path, tmp_path: Path, make_plan: Callable[[Path, ShadowRepository], Any]
) -> None:
    """The plan saw a folder; by the time undo writes (or removes), `a` is a link to the
    user's `b`: neither `b/x.txt` is overwritten nor removed."""
    repository = ShadowRepository(root, tmp_path / "shadow")
    (root / "b").mkdir()
    (root / "b" / "x.txt").write_text(USERS)
    undo_plan = make_plan(root, repository)
    swap_for_link(root / "a", "b")
    result = await apply(repository, undo_plan, MemoryEditor(root))
    assert (root / "b" / "x.txt").read_text() == USERS
    assert (result.restored, result.removed, result.declined) == ([], [], ["a/x.txt"])
    assert "a is a link to b" in result.reasons["a/x.txt"]


async def test_a_folder_swapped_for_a_link_during_the_write_cannot_redirect_it(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last moment a swap can happen: after undo's walk opened folder `a`, before the
    file is created in it. The walk holds `a`'s descriptor and creates the file relative to
    it, so the write lands in the folder that was `a` (now `a.moved`), never in `b`."""
    repository = ShadowRepository(root, tmp_path / "shadow")
    (root / "b").mkdir()
    (root / "b" / "x.txt").write_text(USERS)
    undo_plan = _restore_through_a_swapped_folder(root, repository)
    real_open = os.open
    swapped = []

    def open_then_swap(path: Any, flags: int, *arguments: Any, **keywords: Any) -> int:
        descriptor = real_open(path, flags, *arguments, **keywords)
        if path == "a" and keywords.get("dir_fd") is not None and not swapped:
            swapped.append(path)
            swap_for_link(root / "a", "b")
        return descriptor

    monkeypatch.setattr(os, "open", open_then_swap)
    result = await apply(repository, undo_plan, MemoryEditor(root))
    monkeypatch.undo()
    assert swapped and (root / "a").is_symlink()
    assert (root / "b" / "x.txt").read_text() == USERS
    assert (root / "a.moved" / "x.txt").read_text() == "a's old text\n"
    assert result.restored == ["a/x.txt"] and result.reasons == {}


async def test_a_link_in_place_of_an_open_file_is_not_given_to_the_editor(
    root: Path, tmp_path: Path
) -> None:
    """The last component: `a.txt` held a file at the checkpoint and is now a link. On disk
    undo replaces the link itself (by a rename, which never follows it); an editor would
    write through the link into `keep.txt`, so an open file there is declined instead."""
    repository = ShadowRepository(root, tmp_path / "shadow")
    (root / "a.txt").write_text("a's old text\n")
    (root / "keep.txt").write_text(USERS)
    record(repository, "task")
    record(repository, "step", 1)
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to("keep.txt")
    editor = MemoryEditor(root)
    editor.open[root / "a.txt"] = USERS  # what an editor shows of the link
    result = await apply(repository, plan(repository, None), editor)
    assert editor.proposals == [] and (root / "keep.txt").read_text() == USERS
    assert (result.declined, result.conflicts) == (["a.txt"], [])
    assert result.reasons == {
        "a.txt": "not restored: a.txt is a link to keep.txt; put it back by hand"
    }
