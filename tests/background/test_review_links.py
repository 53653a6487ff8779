"""A review never gives the editor or the disk a path through a link (issue 38, BG1/BG2).

The repository, the task's branch and the user's files are made here with git, as a task
would leave them; the plan and its landing are then run as the doors run them, with a
reviewer that records what it was given (the editor's door would send each to the editor).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from agentls.agent.conversation import Conversation
from agentls.background import review
from agentls.background.landing import carry_out
from agentls.terminal.background_commands import TerminalReviewer
from background_tasks import git, make_repository


class Recording:
    """A door that accepts everything and lands nothing: what it was given is what an
    editor would have been sent."""

    def __init__(self) -> None:
        self.given: list[str] = []

    async def change(self, item: review.FileReview) -> tuple[int, str]:
        assert item.change is not None
        self.given.append(item.path)
        return len(item.change.hunks), ""

    async def delete(self, item: review.FileReview) -> tuple[bool, str]:
        self.given.append(item.path)
        return True, ""


def start(root: Path, links: dict[str, str], texts: dict[str, str]) -> Path:
    """`root` as a repository holding `links` (name: target) and `texts`, with a worktree
    beside it on the branch `task`, where the test plays the task's part."""
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    for name, target in links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / name)
    make_repository(root, texts)
    tree = root.parent / "tree"
    git(root, "worktree", "add", "-q", "-b", "task", str(tree))
    return tree


def finish(root: Path, tree: Path) -> review.ReviewPlan:
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "the task")
    base, commit = git(root, "rev-parse", "HEAD").strip(), git(root, "rev-parse", "task").strip()
    return review.plan(root, base, commit, {}, "background task t")


def land(root: Path, plan: review.ReviewPlan, reviewer: object) -> dict[str, dict[str, object]]:
    reports = asyncio.run(carry_out(root, plan, reviewer, Conversation(), "review"))  # type: ignore[arg-type]
    return {str(r["path"]): r for r in reports}


def untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "keep\n"


def test_a_link_the_task_replaced_with_a_folder_is_declined_with_what_is_under_it(
    root: Path,
) -> None:
    tree = start(root, {"out": "../outside"}, {"app.txt": "app\n"})
    (tree / "out").unlink()
    (tree / "out").mkdir()
    (tree / "out" / "x.txt").write_text("x\n")
    (tree / "z.txt").write_text("z\n")
    plan = finish(root, tree)

    door = Recording()
    reports = land(root, plan, door)
    assert door.given == ["z.txt"]  # on main: out/x.txt too, the editor writing outside/x.txt
    by_path = {item.path: item for item in plan.files}
    assert by_path["out"].declined.startswith(
        "out was a link to ../outside when the task started, and the task replaced it with a folder"
    )
    assert "out was a link to ../outside" in by_path["out/x.txt"].declined
    assert not by_path["out/x.txt"].proposed and by_path["out/x.txt"].change is None
    assert plan.binary == []
    assert reports["out/x.txt"]["declined"] is True
    assert "out was a link" in str(reports["out/x.txt"]["reason"])
    assert reports["z.txt"]["accepted"] == 1 and reports["z.txt"]["declined"] is False
    untouched(root.parent / "outside")


def test_a_nested_link_and_links_the_task_made_or_removed_are_declined(root: Path) -> None:
    links = {"a/b": "../../outside", "l": "../outside/keep.txt"}
    tree = start(root, links, {"a/keep.txt": "a\n", "app.txt": "app\n"})
    (tree / "a" / "b").unlink()
    (tree / "a" / "b" / "c").mkdir(parents=True)
    (tree / "a" / "b" / "c" / "x.txt").write_text("x\n")
    (tree / "app.txt").unlink()
    os.symlink("../outside/keep.txt", tree / "app.txt")  # a file made a link
    os.symlink("/etc/hostname\n\x1b[2J", tree / "new")  # a new link, its target no text
    (tree / "l").unlink()  # a link removed
    (tree / "sub").mkdir()  # a repository in the tree: added as a submodule, which on main
    make_repository(tree / "sub", {"s.txt": "s\n"})  # failed the whole plan
    plan = finish(root, tree)

    door = Recording()
    land(root, plan, door)
    # On main: a/b/c/x.txt (through the link) and app.txt and new (holding a link's target).
    assert door.given == []
    by_path = {item.path: item.declined for item in plan.files}
    assert "a/b was a link to ../../outside" in by_path["a/b/c/x.txt"]
    assert by_path["app.txt"].startswith("the task made app.txt a link to ../outside/keep.txt")
    assert by_path["new"].startswith("the task made new a link to '/etc/hostname\\n\\x1b[2J'")
    assert by_path["l"].startswith(
        "l was a link to ../outside/keep.txt when the task started, and the task deleted it"
    )
    assert by_path["sub"] == "sub is a submodule, which a review never changes"
    assert (root / "app.txt").read_text() == "app\n" and not (root / "app.txt").is_symlink()
    untouched(root.parent / "outside")


def _swap_for_a_link(root: Path, folder: str) -> Path:
    """The user's `folder` moved out of the workspace and a link to it put in its place."""
    moved = root.parent / "moved"
    shutil.move(root / folder, moved)
    os.symlink("../moved", root / folder)
    return moved


def test_a_link_swapped_in_for_a_real_folder_declines_changes_and_deletions(root: Path) -> None:
    tree = start(root, {}, {"d/y.txt": "y\n", "d/w.txt": "w\n", "z.txt": "z\n"})
    (tree / "d" / "y.txt").write_text("y2\n")
    (tree / "d" / "w.txt").unlink()
    (tree / "z.txt").write_text("z2\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "the task")
    moved = _swap_for_a_link(root, "d")
    base, commit = git(root, "rev-parse", "HEAD").strip(), git(root, "rev-parse", "task").strip()
    # The editor has the file open by its path through the link.
    opened = {root / "d" / "w.txt": "w\n", root / "d" / "y.txt": "y\n"}
    plan = review.plan(root, base, commit, opened, "background task t")

    door = Recording()
    land(root, plan, door)
    assert door.given == ["z.txt"]  # on main: the deletion of d/w.txt, through the link
    by_path = {item.path: item for item in plan.files}
    for name in ("d/w.txt", "d/y.txt"):
        assert by_path[name].declined.startswith("d is a link to ../moved in your files")
    assert by_path["d/w.txt"].kind == "delete" and not by_path["d/w.txt"].proposed
    assert sorted(p.name for p in moved.iterdir()) == ["w.txt", "y.txt"]
    assert (moved / "y.txt").read_text() == "y\n"


def test_a_link_swapped_in_after_the_plan_is_met_before_the_editor_is_sent_anything(
    root: Path,
) -> None:
    tree = start(root, {}, {"d/y.txt": "y\n", "d/w.txt": "w\n", "z.txt": "z\n"})
    (tree / "d" / "y.txt").write_text("y2\n")
    (tree / "d" / "w.txt").unlink()
    (tree / "z.txt").write_text("z2\n")
    plan = finish(root, tree)
    assert all(item.proposed for item in plan.files)
    moved = _swap_for_a_link(root, "d")

    door = Recording()
    reports = land(root, plan, door)
    assert door.given == ["z.txt"]
    for name in ("d/w.txt", "d/y.txt"):
        assert reports[name]["declined"] is True and reports[name]["accepted"] == 0
        assert str(reports[name]["reason"]).startswith("d is a link to ../moved in your files")
    assert sorted(p.name for p in moved.iterdir()) == ["w.txt", "y.txt"]


def _swapping_at(root: Path, which: str, questions: list[str]) -> Callable[[str], str]:
    """The terminal's question, answered yes; the one naming `which` is the moment the
    folder `d` becomes a link: after every look the review takes, before anything is
    written."""

    def ask(question: str) -> str:
        if not any(which in q for q in questions) and which in question:
            _swap_for_a_link(root, "d")
        questions.append(question)
        return "y"

    return ask


def test_the_terminal_refuses_a_deletion_through_a_link_swapped_in_and_goes_on(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = start(root, {}, {"d/y.txt": "y\n", "d/w.txt": "w\n", "z.txt": "z\n"})
    (tree / "d" / "y.txt").write_text("y2\n")
    (tree / "d" / "w.txt").unlink()
    (tree / "z.txt").write_text("z2\n")
    plan = finish(root, tree)
    questions: list[str] = []

    reviewer = TerminalReviewer(root, _swapping_at(root, "Delete d/w.txt", questions), False)
    reports = land(root, plan, reviewer)
    assert reports["d/w.txt"]["declined"] is True and reports["d/w.txt"]["accepted"] == 0
    assert reports["d/w.txt"]["reason"] == "not deleted: d is a link to ../moved"
    # d/y.txt is met by the walk before its question; z.txt is still asked and written.
    assert str(reports["d/y.txt"]["reason"]).startswith("d is a link to ../moved in your files")
    assert len(questions) == 2 and "z.txt" in capsys.readouterr().out
    moved = root.parent / "moved"
    assert (moved / "y.txt").read_text() == "y\n" and (moved / "w.txt").read_text() == "w\n"
    assert (root / "z.txt").read_text() == "z2\n"


def test_the_terminal_refuses_a_write_through_a_link_swapped_in_and_goes_on(root: Path) -> None:
    tree = start(root, {}, {"d/y.txt": "y\n", "z.txt": "z\n"})
    (tree / "d" / "y.txt").write_text("y2\n")
    (tree / "z.txt").write_text("z2\n")
    plan = finish(root, tree)
    questions: list[str] = []

    reviewer = TerminalReviewer(root, _swapping_at(root, "Apply", questions), False)
    reports = land(root, plan, reviewer)
    assert reports["d/y.txt"]["declined"] is True and reports["d/y.txt"]["accepted"] == 0
    assert "(d is a link to ../moved)" in str(reports["d/y.txt"]["reason"])
    assert reports["z.txt"]["accepted"] == 1 and len(questions) == 2
    assert (root.parent / "moved" / "y.txt").read_text() == "y\n"
    assert (root / "z.txt").read_text() == "z2\n"


def test_the_terminal_shows_the_branchs_escapes_instead_of_obeying_them(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = start(root, {}, {"z.txt": "z\n"})
    (tree / "e\x1b[2K.txt").write_text("rm -rf ~\x1b[2K\r# a comment\n")
    (tree / "z.txt").unlink()
    plan = finish(root, tree)
    questions: list[str] = []

    land(root, plan, TerminalReviewer(root, lambda q: questions.append(q) or "n", False))
    out = capsys.readouterr().out + "".join(questions)
    assert "\x1b" not in out and "\r" not in out
    assert "e\\x1b[2K.txt: hunk 1 of 1" in out and "+rm -rf ~\\x1b[2K\\r# a comment" in out
    assert "Delete z.txt, as the task did?" in out
