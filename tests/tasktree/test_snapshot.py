"""The base of a task on the user's own repository: what the user sees (HEAD and the
uncommitted changes) as one commit by agentls, the user's index, branch and files untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentls.tasktree import snapshot, worktree
from batches import GIT, make_repository


def _git(repository: Path, *arguments: str) -> str:
    done = subprocess.run([*GIT, *arguments], cwd=repository, check=True, capture_output=True)
    return done.stdout.decode()


def test_the_base_holds_the_uncommitted_changes_and_leaves_the_user_s_index(
    tmp_path: Path,
) -> None:
    repository = make_repository(tmp_path / "repo")
    head = _git(repository, "rev-parse", "HEAD").strip()
    (repository / "new.py").write_text("fresh = True\n")
    status = _git(repository, "status", "--porcelain")

    base = snapshot.take(repository, "t1")

    assert _git(repository, "rev-parse", "HEAD").strip() == head
    assert _git(repository, "status", "--porcelain") == status  # nothing staged by us
    assert _git(repository, "show", f"{base}:new.py") == "fresh = True\n"
    assert _git(repository, "rev-parse", f"{base}^").strip() == head
    # One identity for what agentls commits, whoever the user is.
    assert _git(repository, "log", "-1", "--format=%an <%ae>|%cn <%ce>", base) == (
        "agentls <agentls@localhost>|agentls <agentls@localhost>\n"
    )
    assert worktree.resolve_base(repository, snapshot.base_ref("t1")) == base


def test_nothing_changed_means_the_base_is_head_and_forget_removes_its_ref(
    tmp_path: Path,
) -> None:
    repository = make_repository(tmp_path / "repo")
    head = _git(repository, "rev-parse", "HEAD").strip()
    assert snapshot.take(repository, "t2") == head
    snapshot.forget(repository, "t2", "agentls/background/t2")
    listed = _git(repository, "for-each-ref", "--format=%(refname)", "refs/agentls")
    assert listed == ""
