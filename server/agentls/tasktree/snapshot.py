"""The commit a background task starts from: what the user sees, HEAD and their uncommitted
changes (staged or not, new files git does not ignore), as one commit on top of HEAD, like a
stash but made without touching the user's index, stash, branch or files.

git works in a temporary index (a copy of the user's, so git's stat data spares it hashing
unchanged files), through `safe_git` as all agentls's git; the blobs land in the user's
object store (as `git stash` puts them), the commit is kept reachable by a ref of its own,
`refs/agentls/background-base/<id>` (not `refs/agentls/background/<id>`, which git would
read for the branch `agentls/background/<id>`), removed when the task is discarded.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from . import worktree
from .worktree import TreeError, git, no_filters


def base_ref(task_id: str) -> str:
    return f"refs/agentls/background-base/{task_id}"


def head(root: Path) -> str | None:
    """HEAD's commit; None on a branch with no commit yet."""
    found = git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], root, check=False)
    return found.strip() or None


def take(root: Path, task_id: str) -> str:
    """The commit of what `root` holds now, on top of HEAD (HEAD itself when nothing
    differs), kept by `base_ref(task_id)`. Raises TreeError (not a repository, git failed)."""
    if not (root / ".git").exists():
        # A folder inside a repository would need its tree's subfolder as the agent's root,
        # and a review of paths outside the workspace: not yet.
        raise TreeError(f"{root} is not the top folder of a git repository")
    git_dir = Path(git(["rev-parse", "--absolute-git-dir"], root).strip())
    parent = head(root)
    folder = Path(tempfile.mkdtemp(prefix="agentls-snapshot-"))
    try:
        index = folder / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            shutil.copyfile(git_dir / "index", index)
        except OSError:
            git(["read-tree", parent or worktree.EMPTY_TREE], root, env=env)
        # Checked-in files land as the repository stores them: no filter driver runs.
        git([*no_filters(root), "add", "--all", "--", "."], root, env=env)
        tree = git(["write-tree"], root, env=env).strip()
        if parent is not None and tree == git(["rev-parse", f"{parent}^{{tree}}"], root).strip():
            commit = parent
        else:
            message = f"agentls: what the user had when background task {task_id} started\n"
            options = ["-p", parent] if parent else []
            commit = git(
                ["commit-tree", tree, *options, "-F", "-"], root, data=message.encode(), env=env
            ).strip()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    git(["update-ref", base_ref(task_id), commit], root)
    return commit


def forget(root: Path, task_id: str, branch: str) -> None:
    """The task's refs gone: its base's and its branch (a discarded task)."""
    for ref in (base_ref(task_id), f"refs/heads/{branch}"):
        git(["update-ref", "-d", ref], root, check=False)


__all__ = ["TreeError", "base_ref", "forget", "head", "take"]
