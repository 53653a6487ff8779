"""Tasks making their worktrees of one repository at the same moment (a batch's workers,
background tasks started together): each gets its tree. A `worktree prune` (which `make`
runs first) used to remove the record of another task's `worktree add` half done."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentls.tasktree import worktree
from batches import make_repository


def test_worktrees_made_at_once_all_succeed(tmp_path: Path) -> None:
    repository = make_repository(tmp_path / "repo")
    for name in range(200):
        (repository / f"f{name}.txt").write_text(f"{name}\n")

    def make(number: int) -> str:
        try:
            worktree.make(repository, None, tmp_path / "trees" / f"t{number}")
        except worktree.TreeError as error:
            return str(error)
        return "made"

    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(make, range(24)))
    assert made == ["made"] * 24
