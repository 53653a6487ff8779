"""Around each sandboxed command: nothing git reads was left set to run a program outside the
sandbox.

The root's `.git/config` and `.git/hooks` are read-only in the sandbox, but a command can
write every other git folder of the workspace: a submodule's (`.git/modules/<name>`), a
linked worktree's (`.git/worktrees/<name>`), a nested repository at any depth (one it made
included), or a folder it points git to with a `commondir` or a `gitdir:` file. The user's
`git status` in the root reads them, and runs what their config names (`core.fsmonitor`,
filters, a pager, ...) or their hooks; so does an editor's git in any repository of a
folder it has a file open from (VS Code's `git.autoRepositoryDetection`).

So before and after each command, the audit reads what git reads in each of those folders,
links followed as git follows them: `config`, `config.worktree`, the hooks, and the
redirects (`commondir`, a worktree's `gitdir`, each `.git` file or link). The `.git` entries
are found at every depth (`nested_repositories.py`: only folders whose change time moved
are listed again). What the command made or changed is disarmed before its result goes
back, when it is:
- a config with a key not known to be inert (`inert_config.py`: an allow-list, not a list
  of the keys that run programs), or one git cannot read, or not a plain file;
- a config or a hook that is a new link, a new or changed hook, a `hooks` folder made a link;
- a redirect git did not make itself: a `.git` link, a `gitdir:` that names no submodule's or
  worktree's folder of the workspace, a `commondir` anywhere but in a worktree's folder.
A changed file gets its old content back, anything else is renamed to
`<name>.agentls-blocked`, and the model is told to tell the user. Disarming writes only in
the workspace, in a folder reached without following a link, and never through a link.
Files the command did not touch are the user's own, and left alone.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import secrets
import stat
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .inert_config import refusal
from .nested_repositories import NestedRepositories

log = logging.getLogger(__name__)

BLOCKED = ".agentls-blocked"
_MAX_BYTES = 4 * 1024 * 1024
"""Larger files are not read; one the command made or changed that large is disarmed."""
_MAX_MODULE_DEPTH = 4
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Kind(enum.Enum):
    CONFIG = "config"
    HOOK = "hook"
    HOOKS_FOLDER = "hooks folder"
    GIT_ENTRY = "a .git file or link"
    COMMONDIR = "commondir"
    WORKTREE_LINK = "a worktree's gitdir"


@dataclass(frozen=True, kw_only=True)
class Seen:
    """One file git reads, as it was."""

    kind: Kind
    link: str | None
    """Where the entry points, when it is a symlink."""
    data: bytes | None
    """What git reads there, links followed; None when it is no regular file, too big, or
    cannot be read (`problem` says which)."""
    problem: str | None
    mode: int
    identity: tuple[int, ...]
    """What the path reaches (device, inode, size, times), for a file not read."""
    target: str | None = None
    """For a redirect: the real path of the folder it leads git to."""

    def same_as(self, other: Seen) -> bool:
        if (self.link, self.problem, self.mode, self.target) != (
            other.link,
            other.problem,
            other.mode,
            other.target,
        ):
            return False
        if self.data is None and other.data is None:
            return self.identity == other.identity
        return self.data == other.data


@dataclass(frozen=True)
class Snapshot:
    """What the audit read before a command."""

    files: Mapping[Path, Seen]


class GitAudit:
    """The git settings of one workspace, read around each sandboxed command.

    `after(before())` around anything that runs in the sandbox. No event loop is assumed:
    both may be called from any thread (they block on the disk and on `git config`)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._nested = _repositories_of(self.root)

    def before(self) -> Snapshot:
        return Snapshot(self._read()[0])

    def after(self, before: Snapshot) -> list[str]:
        """Disarm what was planted since `before`; a line for each thing disarmed."""
        said = []
        files, owned = self._read()
        for path, seen in files.items():
            old = before.files.get(path)
            if old is not None and old.same_as(seen):
                continue
            reason = self._planted(path, seen, old, owned)
            if reason is not None:
                said.append(self._disarm(path, seen, old, reason))
        for line in said:
            log.warning("a sandboxed command planted a git setting that runs a program: %s", line)
        return said

    def _read(self) -> tuple[dict[Path, Seen], set[Path]]:
        """Each file git reads in the workspace's git folders, and the folders of its
        submodules and worktrees (where a `gitdir:` may point)."""
        files: dict[Path, Seen] = {}
        owned: set[Path] = set()
        pending: list[Path] = []
        for entry in self._nested.look():
            if _is_real_folder(entry):
                pending.append(entry)
            else:
                self._redirect(entry, Kind.GIT_ENTRY, files, pending)
        done: set[Path] = set()
        while pending:
            folder = pending.pop()
            if folder in done or not folder.is_relative_to(self.root):
                continue
            done.add(folder)
            self._read_git_folder(folder, files, pending)
            inner = [*_modules(folder / "modules", _MAX_MODULE_DEPTH), *_worktrees(folder)]
            owned.update(inner)
            pending += inner
        return files, owned

    def _read_git_folder(self, folder: Path, files: dict[Path, Seen], pending: list[Path]) -> None:
        for name in ("config", "config.worktree"):
            _add(files, folder / name, Kind.CONFIG)
        self._redirect(folder / "commondir", Kind.COMMONDIR, files, pending)
        if folder.parent.name == "worktrees":
            self._redirect(folder / "gitdir", Kind.WORKTREE_LINK, files, pending)
        hooks = folder / "hooks"
        if os.path.islink(hooks):
            _add(files, hooks, Kind.HOOKS_FOLDER)
        for name in _hooks(hooks):
            _add(files, hooks / name, Kind.HOOK)

    def _redirect(
        self, path: Path, kind: Kind, files: dict[Path, Seen], pending: list[Path]
    ) -> None:
        seen = _add(files, path, kind)
        if seen is not None and seen.target is not None and kind != Kind.WORKTREE_LINK:
            pending.append(Path(seen.target))  # read as well, whether it stays or not

    def _planted(self, path: Path, seen: Seen, old: Seen | None, owned: set[Path]) -> str | None:
        """Why this new or changed file lets git run something outside the sandbox."""
        new_link = seen.link is not None and (old is None or old.link != seen.link)
        if seen.kind == Kind.CONFIG:
            if new_link:
                return f"a link to {seen.link}"
            if seen.data is None:
                return seen.problem
            return refusal(seen.data, path.parent, self.root)
        if seen.kind == Kind.HOOK:
            return f"a hook, a link to {seen.link}" if seen.link else "a hook"
        if seen.kind == Kind.HOOKS_FOLDER:
            return f"the hooks folder, a link to {seen.link}"
        return self._redirected(path, seen, owned)

    def _redirected(self, path: Path, seen: Seen, owned: set[Path]) -> str | None:
        """Why a new or changed redirect is not one git made itself, or None."""
        if seen.link is not None:
            return f"a link to {seen.link}"
        target = Path(seen.target) if seen.target else None
        if seen.kind == Kind.GIT_ENTRY and target in owned:
            return None  # a submodule's or a worktree's: read like the rest
        is_worktree = path.parent.parent.name == "worktrees"
        if seen.kind == Kind.COMMONDIR and is_worktree and target == path.parent.parent.parent:
            return None
        if seen.kind == Kind.WORKTREE_LINK and target and target.is_relative_to(self.root):
            return None
        return f"a redirect to {seen.target or 'an unreadable place'}"

    def _disarm(self, path: Path, seen: Seen, old: Seen | None, reason: str) -> str:
        shown = path.relative_to(self.root).as_posix()
        restore = (
            old is not None
            and old.link is None
            and old.data is not None
            and (old.target == seen.target or old.data != seen.data)
        )
        try:
            with _folder(self.root, path) as folder:
                if restore and old is not None and old.data is not None:
                    _put_back(folder, path.name, old.data, old.mode)
                    return f"{shown} ({reason}): put back as it was"
                moved = _move_aside(folder, path.name)
        except OSError as error:
            log.error("could not disarm %s: %s", shown, error)
            return f"{shown} ({reason}): could not be disarmed ({error.strerror or error})"
        return f"{shown} ({reason}): moved to {path.with_name(moved).relative_to(self.root)}"


_repositories: dict[Path, NestedRepositories] = {}
_repositories_lock = threading.Lock()


def _repositories_of(root: Path) -> NestedRepositories:
    """One walk per workspace, shared by every audit of it (a task's shell, hooks, servers):
    the first walk of a big tree is the costly one."""
    with _repositories_lock:
        if root not in _repositories:
            _repositories[root] = NestedRepositories(root)
        return _repositories[root]


def _add(files: dict[Path, Seen], path: Path, kind: Kind) -> Seen | None:
    seen = _look(path, kind)
    if seen is not None:
        files[path] = seen
    return seen


def _look(path: Path, kind: Kind) -> Seen | None:
    """What is at `path` now, read as git reads it (through links), or None if nothing."""
    try:
        status = os.lstat(path)
        link = os.readlink(path) if stat.S_ISLNK(status.st_mode) else None
    except OSError:
        return None
    data, problem, mode, identity = _read_through(path)
    target = _target(path, kind, data) if kind not in _NOT_REDIRECTS else None
    return Seen(
        kind=kind,
        link=link,
        data=data,
        problem=problem,
        mode=mode,
        identity=identity,
        target=target,
    )


_NOT_REDIRECTS = {Kind.CONFIG, Kind.HOOK, Kind.HOOKS_FOLDER}


def _read_through(path: Path) -> tuple[bytes | None, str | None, int, tuple[int, ...]]:
    """The file's content, links followed; a FIFO, a device or a huge file is not read
    (nor opened, but for a FIFO swapped in after the look, which the open does not wait
    for)."""
    try:
        status = os.stat(path)
    except OSError:
        return None, "a link to nothing git can read", 0, ()
    identity = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    mode = stat.S_IMODE(status.st_mode)
    if stat.S_ISDIR(status.st_mode):
        return None, "a folder", mode, identity
    if not stat.S_ISREG(status.st_mode):
        return None, "not a regular file", mode, identity
    if status.st_size > _MAX_BYTES:
        return None, "too big to check", mode, identity
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, "a file that cannot be read", mode, identity
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None, "not a regular file", mode, identity
        data = stream.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        return None, "too big to check", mode, identity
    return data, None, mode, identity


def _target(path: Path, kind: Kind, data: bytes | None) -> str | None:
    """The real path of the folder a redirect names, or None if it names none."""
    if kind == Kind.GIT_ENTRY and os.path.islink(path):
        return os.path.realpath(path)
    if data is None:
        return None
    text = data.decode("utf-8", "surrogateescape")
    lines = text.splitlines() or [""]
    if kind == Kind.GIT_ENTRY:
        if not lines[0].startswith("gitdir:"):
            return None
        named = lines[0].removeprefix("gitdir:").strip()
    else:
        named = lines[0].strip()
    if not named:
        return None
    return os.path.realpath(path.parent / named)


def _is_real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _modules(folder: Path, depth: int) -> Iterator[Path]:
    """The git folders of submodules under `.git/modules`, with names of several parts
    (`a/b`) too; links not followed, and no git folder entered."""
    if depth == 0:
        return
    for inner in _folders_in(folder):
        if os.path.lexists(inner / "HEAD"):
            yield inner
        else:
            yield from _modules(inner, depth - 1)


def _worktrees(folder: Path) -> list[Path]:
    return list(_folders_in(folder / "worktrees"))


def _folders_in(folder: Path) -> Iterator[Path]:
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    yield Path(entry.path)


def _hooks(folder: Path) -> list[str]:
    """The hooks' names, through a link as git follows it."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        return [e.name for e in entries if not e.name.endswith((".sample", BLOCKED))]
    return []


@contextlib.contextmanager
def _folder(root: Path, path: Path) -> Iterator[int]:
    """A descriptor of the real folder holding `path`, reached from `root` one name at a
    time without following a link: whatever was swapped in on the way, nothing is written
    outside the workspace."""
    real = Path(os.path.realpath(path.parent))
    if not real.is_relative_to(root):
        raise PermissionError(0, "outside the workspace, not touched")
    descriptor = os.open(root, _FOLDER)
    try:
        for part in real.relative_to(root).parts:
            inner = os.open(part, _FOLDER, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        yield descriptor
    finally:
        os.close(descriptor)


def _move_aside(folder: int, name: str) -> str:
    """Rename `name` (the entry itself: a link is not followed) to a free blocked name."""
    for attempt in range(100):
        moved = f"{name}{'.' + str(attempt) if attempt else ''}{BLOCKED}"
        try:
            os.lstat(moved, dir_fd=folder)
        except FileNotFoundError:
            os.rename(name, moved, src_dir_fd=folder, dst_dir_fd=folder)
            return moved
    raise FileExistsError(0, "no free name to move it to")


def _put_back(folder: int, name: str, data: bytes, mode: int) -> None:
    """Replace the entry `name` (a link itself, never what it points to) by a file holding
    `data`."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(name, dir_fd=folder).st_mode):
            _move_aside(folder, name)
    temporary = f".{name}.agentls-{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temporary, flags, 0o600, dir_fd=folder)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            os.fchmod(stream.fileno(), mode or 0o644)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=folder)
        raise
