"""A worker's kept tree, given to its next task on the same repository: whatever the last
task left in it, the next task finds exactly its base, and nothing outside the tree moved."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agentls.tasktree import worktree
from agentls.tasktree.spare_trees import SpareTrees, remove_left
from batches import GIT, make_repository, worktrees


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    repository = make_repository(tmp_path / "repo")
    (repository / ".gitignore").write_text("build/\n")
    (repository / "pkg").mkdir()
    (repository / "pkg" / "mod.py").write_text("y = 1\n")
    subprocess.run([*GIT, "add", "."], cwd=repository, check=True)
    subprocess.run([*GIT, "commit", "-qm", "more"], cwd=repository, check=True)
    return repository


@pytest.fixture
def spares(repository: Path, tmp_path: Path) -> Iterator[SpareTrees]:
    """A worker's kept trees in `tmp_path / "trees"`; as the worker ends, they go, and the
    repository knows its own worktree only."""
    spares = SpareTrees()
    yield spares
    spares.close()
    assert worktrees(repository) == [str(repository)]
    assert not list((tmp_path / "trees").glob(".spare-*"))


def files_of(tree: Path) -> dict[str, str]:
    """Every entry under `tree` but its git link: a file's text, a link's target."""
    found = {}
    for folder, folders, files in os.walk(tree):
        for name in files + [f for f in folders if os.path.islink(os.path.join(folder, f))]:
            path = Path(folder, name)
            relative = str(path.relative_to(tree))
            if relative == ".git":
                continue
            found[relative] = f"-> {os.readlink(path)}" if path.is_symlink() else path.read_text()
        folders[:] = [f for f in folders if not os.path.islink(os.path.join(folder, f))]
        found.update({str(Path(folder, f).relative_to(tree)) + "/": "" for f in folders})
    found.pop(".git/", None)
    return found


def _edited(tree: Path, outside: Path) -> None:
    (tree / "app.py").write_text("x = 99\n")
    (tree / "pkg" / "mod.py").unlink()
    (tree / "new.txt").write_text("left behind\n")


def _ignored(tree: Path, outside: Path) -> None:
    (tree / "build").mkdir()
    (tree / "build" / "cache.bin").write_text("ignored, and left\n")


def _nested_repository(tree: Path, outside: Path) -> None:
    subprocess.run([*GIT, "init", "-q", str(tree / "inner")], check=True)
    (tree / "inner" / ".git" / "config").write_text("[core]\n\tfsmonitor = touch planted\n")


def _git_link(tree: Path, outside: Path) -> None:
    (tree / ".git").write_text(f"gitdir: {outside}\n")


def _git_folder(tree: Path, outside: Path) -> None:
    (tree / ".git").unlink()
    subprocess.run([*GIT, "init", "-q", str(tree)], check=True)


def _linked_folder(tree: Path, outside: Path) -> None:
    (tree / "pkg" / "mod.py").unlink()
    (tree / "pkg").rmdir()
    (tree / "pkg").symlink_to(outside)


LEFT: dict[str, Callable[[Path, Path], None]] = {
    "edited": _edited,
    "ignored": _ignored,
    "nested repository": _nested_repository,
    "git link": _git_link,
    "git folder": _git_folder,
    "linked folder": _linked_folder,
}


@pytest.mark.parametrize("left", LEFT)
def test_the_next_task_finds_exactly_its_base(
    repository: Path, tmp_path: Path, spares: SpareTrees, left: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("not the repository's\n")
    trees = tmp_path / "trees"
    fresh = worktree.make(repository, "HEAD~1", trees / "fresh")
    first = spares.make(repository, None, trees / "first", False)
    LEFT[left](first.path, outside)
    spares.keep(first)
    assert not first.path.exists()
    kept = os.stat(next(trees.glob(".spare-*"))).st_ino
    second = spares.make(repository, "HEAD~1", trees / "second", False)
    assert os.stat(second.path).st_ino == kept  # the kept tree, not a new one
    assert second.base == fresh.base
    assert files_of(second.path) == files_of(fresh.path)
    assert second.git(["rev-parse", "HEAD"]).strip() == fresh.base
    assert files_of(outside) == {"mod.py": "not the repository's\n"}
    spares.keep(second)
    worktree.remove(repository, fresh.path)


def test_what_a_dead_attempt_left_at_the_tasks_place_goes_first(
    repository: Path, tmp_path: Path, spares: SpareTrees
) -> None:
    trees = tmp_path / "trees"
    spares.keep(spares.make(repository, None, trees / "first", False))
    (trees / "second").mkdir()
    (trees / "second" / "stale").write_text("a dead attempt's\n")
    second = spares.make(repository, None, trees / "second", False)
    assert "stale" not in files_of(second.path)
    spares.keep(second)


def test_a_kept_tree_git_cannot_move_gives_way_to_a_new_one(
    repository: Path, tmp_path: Path, spares: SpareTrees
) -> None:
    trees = tmp_path / "trees"
    first = spares.make(repository, None, trees / "first", False)
    spares.keep(first)
    (record,) = (repository / ".git" / "worktrees").iterdir()
    shutil.rmtree(record)  # git no longer knows the kept tree
    second = spares.make(repository, None, trees / "second", False)
    assert not list(trees.glob(".spare-*"))
    assert files_of(second.path) == {
        ".gitignore": "build/\n",
        "app.py": "x = 0\n",
        "pkg/": "",
        "pkg/mod.py": "y = 1\n",
    }
    spares.keep(second)


def test_kept_trees_a_dead_worker_left_are_removed(repository: Path, tmp_path: Path) -> None:
    trees = tmp_path / "trees"
    spares = SpareTrees()
    spares.keep(spares.make(repository, None, trees / "first", False))
    # The worker dies here: nobody calls spares.close().
    remove_left(trees, {repository})
    assert not list(trees.glob(".spare-*"))
    assert worktrees(repository) == [str(repository)]


def test_a_record_whose_tree_is_gone_is_pruned(repository: Path, tmp_path: Path) -> None:
    trees = tmp_path / "trees"
    spares = SpareTrees()
    spares.keep(spares.make(repository, None, trees / "first", False))
    # The worker dies after removing its kept tree, before it pruned git's record of it.
    shutil.rmtree(next(trees.glob(".spare-*")))
    remove_left(trees, {repository})
    assert worktrees(repository) == [str(repository)]
