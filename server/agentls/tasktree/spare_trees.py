"""A warm worker's trees kept between its tasks, one per repository. Checking out every file
of a big repository costs seconds; the next task on the same repository instead moves the
kept tree to its own place and resets it to its base, where git writes only the files that
differ. A kept tree is never trusted: its git link is written anew, and one that git cannot
make exactly the base again is removed and a fresh one made. No process of the last task
outlives it (each sandboxed command dies with its own process namespace), so nothing
writes into a tree once it is kept.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from . import worktree


class SpareTrees:
    def __init__(self) -> None:
        self._kept: dict[Path, worktree.Tree] = {}

    def make(self, repository: Path, base: str | None, path: Path, shared: bool) -> worktree.Tree:
        """The task's tree at `path`: the one kept for `repository`, reset, or a fresh one."""
        kept = self._kept.pop(repository.resolve(), None)
        if kept is not None:
            worktree.remove(kept.repository, path)  # what a dead attempt left there
            try:
                moved = worktree.move(kept, path)
            except (worktree.TreeError, OSError):
                worktree.remove(kept.repository, kept.path)
            else:
                tree = worktree.reset(moved, base)
                if tree is not None:
                    return tree
        return worktree.make(repository, base, path, shared)  # which removes `path` first

    def keep(self, tree: worktree.Tree) -> None:
        """Keep `tree` for the next task on its repository (a `--shared` clone is removed:
        its git folder lies in the model's tree)."""
        repository = tree.repository.resolve()
        key = hashlib.sha256(str(repository).encode()).hexdigest()[:12]
        spare = tree.path.parent / f".spare-{os.getpid()}-{key}"
        if not tree.shared:
            worktree.remove(repository, spare)
            try:
                self._kept[repository] = worktree.move(tree, spare)
                return
            except (worktree.TreeError, OSError):
                pass
        worktree.remove(tree.repository, tree.path)

    def close(self) -> None:
        kept, self._kept = self._kept, {}
        for tree in kept.values():
            worktree.remove(tree.repository, tree.path)


def remove_left(trees: Path, repositories: Iterable[Path]) -> None:
    """The kept trees of workers that died before they could remove them, and git's records
    of them (pruned in any case: a worker may have died between the two)."""
    for spare in trees.glob(".spare-*") if trees.is_dir() else []:
        shutil.rmtree(spare, ignore_errors=True)
    for repository in repositories:
        worktree.prune(repository)
