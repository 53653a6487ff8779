"""After each sandboxed command: no git folder the user's own git reads was left set to run a
program outside the sandbox.

The root's `.git/config` and `.git/hooks` are read-only in the sandbox, but a command can
write every other git folder of the workspace: a submodule's (`.git/modules/<name>`), a
linked worktree's (`.git/worktrees/<name>`), a nested repository added to the index as a
gitlink, a `.git` it made where there was none, or the folder a `commondir` or `gitdir:` file
points to. The user's `git status` in the root reads each of them, and runs what their config
names (`core.fsmonitor`, filters, a pager, ...) or their hooks. So does an editor's git in a
nested repository it finds on its own, a few folders down (`NESTED_DEPTH`).

So the config files and hooks of those folders are read before and after each command. One
that the command made or changed and that holds a key not known to be inert
(`inert_config.py`) is disarmed before the command's
result goes back: a changed file gets its old content back, a new one is renamed to
`<name>.agentls-blocked`; and the model is told to tell the user. Files the command did not
touch are the user's own, and left alone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from ...disk.safe_git import safe_git_command, safe_git_env
from .inert_config import refusal

log = logging.getLogger(__name__)

BLOCKED = ".agentls-blocked"

_SETTINGS = ("config", "config.worktree")
_MAX_MODULE_DEPTH = 4
NESTED_DEPTH = 1
"""How many folders below the root a nested repository is looked for: where editors find
them on their own (VS Code's git looks one folder down by default, `git.repositoryScanMaxDepth`,
and runs `git status` there). Each level deeper costs every command a walk of more of the tree
(3 levels of this repository's own checkout: 345 folders, about 11 ms, twice a command)."""
_GIT_SECONDS = 10


class GitAudit:
    """The git settings of one workspace, read around each sandboxed command."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._gitlinks: tuple[tuple[int, int, int], list[str]] | None = None

    def before(self) -> dict[Path, bytes]:
        return self._read()

    def after(self, before: dict[Path, bytes]) -> list[str]:
        """Disarm what the command planted; a line for each file disarmed."""
        said = []
        for path, data in self._read().items():
            if before.get(path) == data:
                continue
            reason = _runs(path, data, self.root)
            if reason is None:
                continue
            shown = path.relative_to(self.root).as_posix()
            if path in before:
                path.write_bytes(before[path])
                said.append(f"{shown} ({reason}): put back as it was")
            else:
                path.rename(path.with_name(path.name + BLOCKED))
                said.append(f"{shown} ({reason}): moved to {shown}{BLOCKED}")
        for line in said:
            log.warning("a sandboxed command planted a git setting that runs a program: %s", line)
        return said

    def _read(self) -> dict[Path, bytes]:
        found: dict[Path, bytes] = {}
        for folder in self._git_folders():
            names = [*_SETTINGS, *(f"hooks/{hook}" for hook in _hooks(folder))]
            for name in names:
                path = folder / name
                with contextlib.suppress(OSError):
                    if path.is_file() and not path.is_symlink():
                        found[path] = path.read_bytes()
        return found

    def _git_folders(self) -> list[Path]:
        """Every git folder the user's git in the root may read, in the workspace."""
        seen: dict[Path, None] = {}
        root_git = _git_folder(self.root / ".git")
        pending = [root_git] if root_git else []
        nested = [*self._gitlink_folders(), *_nested(self.root, NESTED_DEPTH)]
        pending += [g for g in map(_git_folder, nested) if g is not None]
        while pending:
            folder = pending.pop()
            if folder in seen or not folder.is_relative_to(self.root):
                continue
            seen[folder] = None
            pending += _modules(folder / "modules", _MAX_MODULE_DEPTH)
            with contextlib.suppress(OSError):
                pending += [p for p in (folder / "worktrees").iterdir() if p.is_dir()]
            with contextlib.suppress(OSError):
                common = (folder / "commondir").read_text().strip()
                pending.append((folder / common).resolve())
        return list(seen)

    def _gitlink_folders(self) -> list[Path]:
        """The `.git` of each gitlink (submodule) in the root's index: git status looks in
        each. Read again only when the index changed."""
        index = self.root / ".git" / "index"
        try:
            status = index.stat()
        except OSError:
            return []
        key = (status.st_size, status.st_mtime_ns, status.st_ino)
        if self._gitlinks is None or self._gitlinks[0] != key:
            self._gitlinks = (key, self._list_gitlinks())
        return [self.root / path / ".git" for path in self._gitlinks[1]]

    def _list_gitlinks(self) -> list[str]:
        where = [f"--git-dir={self.root / '.git'}", f"--work-tree={self.root}"]
        try:
            done = subprocess.run(
                safe_git_command([*where, "ls-files", "-s", "-z"]),
                capture_output=True,
                stdin=subprocess.DEVNULL,
                cwd=self.root,
                env=safe_git_env(),
                timeout=_GIT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return []
        entries = done.stdout.decode("utf-8", "surrogateescape").split("\0")
        return [e.split("\t", 1)[1] for e in entries if e.startswith("160000 ") and "\t" in e]


def _git_folder(path: Path) -> Path | None:
    """The git folder a `.git` names: itself, or what its `gitdir:` line points to."""
    try:
        if path.is_dir():
            return path.resolve()
        first = path.read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    return (path.parent / first.removeprefix("gitdir:").strip()).resolve()


def _nested(root: Path, depth: int) -> Iterator[Path]:
    """The `.git` of each repository in the folders 1 to `depth` levels below the root, links
    not followed."""
    folders: list[str | Path] = [root]
    for level in range(depth + 1):
        below: list[str | Path] = []
        for folder in folders:
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name == ".git":
                        if level:
                            yield Path(entry.path)
                    elif level < depth and entry.is_dir(follow_symlinks=False):
                        below.append(entry.path)
        folders = below


def _modules(folder: Path, depth: int) -> Iterator[Path]:
    """The git folders of submodules under `.git/modules`, nested ones (`a/b`) included."""
    if depth == 0:
        return
    with contextlib.suppress(OSError):
        for inner in folder.iterdir():
            if inner.is_dir() and not inner.is_symlink():
                if (inner / "HEAD").exists() or (inner / "config").exists():
                    yield inner
                yield from _modules(inner, depth - 1)


def _hooks(folder: Path) -> list[str]:
    with contextlib.suppress(OSError):
        return [
            entry.name
            for entry in os.scandir(folder / "hooks")
            if not entry.name.endswith((".sample", BLOCKED))
        ]
    return []


def _runs(path: Path, data: bytes, root: Path) -> str | None:
    """What in the file would run a program, or None."""
    if path.parent.name == "hooks":
        return "a hook"
    if path.name == "commondir":
        return None
    return refusal(data, path.parent, root)
