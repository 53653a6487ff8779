"""A task's own tree: a git worktree of the task's repository at its base (or a `--shared`
clone), what the task changed committed on a branch, the patch, the tree removed.

The repository may be hostile: every git call goes through `safe_git.run` (no hook, no
pager, no fsmonitor, no credential helper, no global or system config). Checking out and
`git add` run the filter drivers `.gitattributes` names, which `safe_git` cannot list
ahead: so the drivers the repository's config defines are read first
and each is blanked on the command line (an empty `clean`, `smudge` or `process` is no
filter at all), and files land as the repository stores them. After the agent ran, git is
told the tree's git folder and work tree explicitly: the `.git` file in the worktree is the
model's to rewrite (it lies in the writable workspace), and must not point our git
elsewhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..disk import safe_git
from ..disk.state import private_dir, state_base

GIT_TIMEOUT = 600
"""Seconds a git call may take: checking out a big repository on a slow disk is slow."""

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

_DRIVER = re.compile(r"^filter\.(.+)\.(?:clean|smudge|process|required)$")


TreeError = safe_git.GitError
"""A git step of the task's tree failed: the task is an `error`, not the agent's."""


def git(
    arguments: Sequence[str],
    cwd: Path,
    data: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> str:
    """`git ARGUMENTS` in `cwd`, safely; its stdout. Raises TreeError when it fails."""
    output = safe_git.run(arguments, cwd, data=data, env=env, check=check, timeout=GIT_TIMEOUT)
    return output.decode("utf-8", "surrogateescape")


def no_filters(cwd: Path, where: Sequence[str] = ()) -> list[str]:
    """`-c` settings that blank each filter driver the repository's config defines (the
    repository in `cwd`, or the one `where` names: `--git-dir=...`)."""
    query = [*where, "config", "--name-only", "--get-regexp", r"^filter\."]
    listed = git(query, cwd, check=False)
    names = sorted({m.group(1) for line in listed.splitlines() if (m := _DRIVER.match(line))})
    blank = []
    for name in names:
        for key in ("clean", "smudge", "process"):
            blank += ["-c", f"filter.{name}.{key}="]
        blank += ["-c", f"filter.{name}.required=false"]
    return blank


@dataclass(frozen=True)
class Tree:
    """A task's checked-out tree: where it is, its git folder, the commit it started from."""

    path: Path
    git_dir: Path
    repository: Path
    base: str
    shared: bool = False

    def git(self, arguments: Sequence[str], **options: object) -> str:
        where = [f"--git-dir={self.git_dir}", f"--work-tree={self.path}"]
        blank = no_filters(self.path, where) if arguments[0] in ("add", "checkout") else []
        return git([*where, *blank, *arguments], self.path, **options)  # type: ignore[arg-type]


def resolve_base(repository: Path, base: str | None) -> str:
    """The commit `base` names (default HEAD) in `repository`. Raises TreeError."""
    if not (repository / ".git").exists() and not (repository / "HEAD").is_file():
        raise TreeError(f"{repository}: not a git repository on this machine")
    wanted = f"{base or 'HEAD'}^{{commit}}"
    return git(["rev-parse", "--verify", "--end-of-options", wanted], repository).strip()


@contextlib.contextmanager
def one_at_a_time(repository: Path) -> Iterator[None]:
    """git's `worktree add` and `worktree prune` in one repository, one at a time (across
    processes): a prune while another task's add is half done removes that add's record,
    and the add fails (`failed to read .git/worktrees/<name>/commondir`)."""
    key = hashlib.sha256(str(repository.resolve()).encode()).hexdigest()[:16]
    lock = private_dir(state_base() / "locks") / f"worktrees-{key}.lock"
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # let go when the file closes
        yield


def make(repository: Path, base: str | None, path: Path, shared: bool = False) -> Tree:
    """A fresh tree of `repository` at `base` in `path`; what a dead attempt left there
    (a retry, a rerun after the driver was killed) is removed first."""
    commit = resolve_base(repository, base)
    remove(repository, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if shared:
        # Borrows the repository's objects (alternates), writes nothing into it. git's own
        # transport between two local folders, which the safe settings allow only here and
        # for the result's fetch back.
        local = ["-c", "protocol.file.allow=always"]
        git(
            [*local, "clone", "--quiet", "--shared", "--no-checkout", str(repository), str(path)],
            path.parent,
        )
        blank = no_filters(path)
        git([*blank, "checkout", "--quiet", "--detach", commit], path)
        return Tree(path, path / ".git", repository, commit, shared=True)
    blank = no_filters(repository)
    with one_at_a_time(repository):
        git([*blank, "worktree", "add", "--quiet", "--detach", str(path), commit], repository)
    git_dir = Path(git(["rev-parse", "--absolute-git-dir"], path).strip())
    return Tree(path, git_dir, repository, commit)


def move(tree: Tree, path: Path) -> Tree:
    """The worktree moved to `path`, git's record of it too. Its `.git` link is written anew
    first: it lies in the model's writable tree, and git's move trusts it. Raises TreeError
    (a worktree holding submodules cannot move)."""
    link = tree.path / ".git"
    if link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    else:
        link.unlink(missing_ok=True)
    link.write_text(f"gitdir: {tree.git_dir}\n")
    with one_at_a_time(tree.repository):
        git(["worktree", "move", str(tree.path), str(path)], tree.repository)
    return replace(tree, path=path)


def reset(tree: Tree, base: str | None) -> Tree | None:
    """The tree made exactly `base` (default the repository's HEAD) again: git writes only
    the files that differ and removes every other one, ignored and nested repositories too;
    then git must find nothing left. None when it could not be made so (the model took a
    folder's permissions away, say)."""
    try:
        commit = resolve_base(tree.repository, base)
        tree.git(["checkout", "--quiet", "--force", "--detach", commit])
        tree.git(["clean", "--quiet", "-ffdx"])
        left = tree.git(["status", "--porcelain", "--ignored", "--untracked-files=all", "-z"])
    except (TreeError, OSError):
        return None
    return replace(tree, base=commit) if not left else None


def remove(repository: Path, path: Path) -> None:
    """The tree at `path` gone, and git's record of it (a worktree) pruned."""
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
    prune(repository)


def prune(repository: Path) -> None:
    """git's records of worktrees whose folders are gone, forgotten."""
    if (repository / ".git").exists() or (repository / "HEAD").is_file():
        with one_at_a_time(repository):
            git(["worktree", "prune"], repository, check=False)


def snapshot(tree: Tree) -> str:
    """The tree object of the files now in the worktree (what .gitignore leaves)."""
    tree.git(["add", "--all", "--", "."])
    return tree.git(["write-tree"]).strip()


def base_tree(tree: Tree) -> str:
    return tree.git(["rev-parse", f"{tree.base}^{{tree}}"]).strip()


def diff(tree: Tree, before: str, after: str) -> str:
    """The binary patch from one tree object to another: no filter, no external diff, no
    textconv (tree to tree, nothing from the work tree)."""
    return tree.git(
        ["diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", before, after]
    )


def commit(tree: Tree, patch: str, branch: str, message: str) -> str:
    """A commit of `patch` on the task's base, put on `branch` of the task's repository
    (moved if it was there: a rerun never makes a second branch). Only the task's patch:
    what the setup command made stays out. Returns the commit."""
    index = Path(tempfile.mkstemp(prefix="agentls-index-")[1])
    try:
        env = {"GIT_INDEX_FILE": str(index)}
        index.unlink()  # git makes it anew
        tree.git(["read-tree", tree.base], env=env)
        if patch:
            tree.git(
                ["apply", "--cached", "--binary", "--whitespace=nowarn", "-"],
                data=patch.encode("utf-8", "surrogateescape"),
                env=env,
            )
        written = tree.git(["write-tree"], env=env).strip()
        made = tree.git(
            ["commit-tree", written, "-p", tree.base, "-F", "-"], data=message.encode(), env=env
        ).strip()
    finally:
        index.unlink(missing_ok=True)
    if tree.shared:
        # The clone's commit, fetched into the task's repository.
        git(["update-ref", "refs/agentls/result", made], tree.path)
        source = f"+refs/agentls/result:refs/heads/{branch}"
        git(
            [
                "-c",
                "protocol.file.allow=always",
                "fetch",
                "--quiet",
                "--no-tags",
                str(tree.path),
                source,
            ],
            tree.repository,
        )
    else:
        git(["update-ref", f"refs/heads/{branch}", made], tree.repository)
    return made


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def default_location(out: Path, task_id: str) -> Path:
    """Where a task's tree goes: beside the batch's outputs."""
    return out / "worktrees" / task_id
