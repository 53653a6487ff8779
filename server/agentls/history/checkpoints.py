"""Checkpoints: the workspace's files recorded before each task and each mutating step, in a
shadow git repository outside the workspace, so a task can be undone, bash included.

The repository is `$XDG_STATE_HOME/agentls/checkpoints/<workspace key>`, used with
`--git-dir` and `--work-tree`: the user's own `.git` is never read or written (git never
records a `.git` folder, and a nested repository is skipped). Its config, hooks and
attributes are agentls's own, and every git call goes through `safe_git`, so nothing a
repository configures (fsmonitor, hooks, filters, textconv, pagers) ever runs.

What is recorded: every file git does not ignore by the workspace's `.gitignore` files, up
to `MAX_FILE_BYTES`; a file recorded once stays recorded even if a later `.gitignore` covers
it, so a rule written after the checkpoint cannot hide a file from undo. Files created under
ignored paths (build outputs, `node_modules`) and larger files are not recorded and never
touched by undo; nor are files named as `disk.files` names one it is still writing.

Each checkpoint is a commit (so the objects stay reachable) and a line of `checkpoints.jsonl`
in the same folder. A checkpoint costs a few git processes that look only at what changed
since the last one (git's index keeps the files' stat data). The first one of a git
workspace starts from the repository's own index (`git_seed`): only files changed since
git last looked at them are hashed.

No step waits for a whole-tree record it does not need: an edit records the files it
touches at once (their pre-images) and the tree is put together in the background; only a
command (which may change anything) waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import stat
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..disk import safe_git
from ..disk.files import TEMPORARY_GLOB
from ..disk.state import append_line, private_dir, state_dir
from ..interfaces import CheckpointKind, CheckpointMark
from .git_seed import seed_index

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1024 * 1024
"""Files larger than this are not recorded (and so never restored or removed by undo): the
limit is per file, and a tree of any number of files is recorded whole."""

GIT_TIMEOUT = 120
"""Seconds a git call may take (a hung network file system) before the checkpoint is given
up; the task goes on."""

_CONFIG = """[core]
\trepositoryformatversion = 0
\tbare = false
\tautocrlf = false
\tsymlinks = true
\tfilemode = true
\tsplitIndex = true
[gc]
\tauto = 0
[commit]
\tgpgSign = false
[index]
\tversion = 4
"""
"""The shadow repository's whole config, written by agentls (see `_own_files`). Each
checkpoint rewrites the index twice: a split index in version 4 makes that a few kilobytes
instead of the whole index (400 KB for 5,000 files)."""
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n"
"""$GIT_DIR/info/attributes outranks the workspace's .gitattributes: files are recorded
byte for byte, with no line-ending conversion, re-encoding, keyword expansion or filter."""

Kind = CheckpointKind
"""The end of a task is not an undo target: it tells the agent's changes from the user's."""

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_NO_OBJECT = "0" * 40
"""With mode 0 in `update-index --index-info`: the path leaves the index."""


class CheckpointError(Exception):
    """git failed or is missing; the task goes on without a checkpoint."""


@dataclass(kw_only=True)
class Checkpoint:
    id: int
    kind: Kind
    session: str
    task: int
    step: int | None
    label: str
    time: float
    tree: str
    skipped: list[str] = field(default_factory=list)
    """Files present but not recorded (too large): never compared, never restored."""
    target: int | None = None
    """For an "undo" checkpoint: the checkpoint the undo went back to."""
    touches: list[str] | None = None
    """For a step: the only files it may change (an edit's file); None: any (a command)."""


@dataclass(frozen=True)
class Entry:
    """A file in a recorded tree: git's mode ("100644", "100755", "120000") and blob id."""

    mode: str
    blob: str


@dataclass(frozen=True)
class Difference:
    path: str
    before: Entry | None
    after: Entry | None


@dataclass
class Pending:
    """A checkpoint asked for, its tree not yet written."""

    mark: CheckpointMark
    target: int | None = None
    before: dict[str, Entry | None] = field(default_factory=dict)
    """The touched files as they were when it was asked for (None: absent): the tree is
    written later, when they may have changed already."""
    too_large: list[str] = field(default_factory=list)


class ShadowRepository:
    """The checkpoints of one workspace."""

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self.root = root.resolve()
        self.git_dir = private_dir(folder) if folder else state_dir("checkpoints", self.root)
        self.log_path = self.git_dir / "checkpoints.jsonl"

    # git, in one place: every call runs with the repository's programs off.
    def git(
        self,
        *arguments: str,
        data: bytes | None = None,
        work_tree: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> bytes:
        where = [f"--git-dir={self.git_dir}"] + ([f"--work-tree={self.root}"] if work_tree else [])
        try:
            return safe_git.run(
                [*where, *arguments], self.root, data=data, env=env, timeout=GIT_TIMEOUT
            )
        except safe_git.GitError as error:
            raise CheckpointError(str(error)) from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time: two editors on the same folder share the shadow index."""
        with open(self.git_dir / "agentls.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _ensure(self) -> None:
        ready = self.git_dir / "agentls-ready"
        if not ready.exists():  # set up whole (an interrupted set-up is done again)
            # A lock of its own: an edit's pre-image may be written while a checkpoint is
            # recorded (under the main lock).
            with open(self.git_dir / "agentls-setup.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    if not ready.exists():
                        self.git("init", "--quiet", "--bare", "--template=", work_tree=False)
                        self._own_files()
                        seed_index(self.root, self.git_dir, self.git)
                        ready.touch()
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
        self._own_files()

    def _own_files(self) -> None:
        """Put back the repository's config, attributes and excludes as agentls writes them,
        before each use: a command that got to write this folder (run unsandboxed, or the
        state folder inside a workspace) could have named a filter or an fsmonitor there,
        which this very process would run. Nothing else in the folder is read as settings;
        hooks never run (`core.hooksPath` is overridden)."""
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        exclude = f"{TEMPORARY_GLOB}\n"
        # A workspace holding agentls's own state (a home folder opened as the workspace)
        # must not record the checkpoints themselves.
        state = self.git_dir.resolve().parent.parent
        if state.is_relative_to(self.root):
            exclude += f"/{_glob_escaped(state.relative_to(self.root).as_posix())}/\n"
        for path, text in (
            (self.git_dir / "config", _CONFIG),
            (info / "attributes", _ATTRIBUTES),
            (info / "exclude", exclude),
        ):
            try:
                current = path.read_bytes() if not path.is_symlink() else None
            except FileNotFoundError:
                current = None
            if current != text.encode():
                _replace(path, text)
        for stray in ("commondir", "config.worktree"):
            # commondir would move every setting to a folder it names.
            with contextlib.suppress(FileNotFoundError):
                (self.git_dir / stray).unlink()

    def record(self, mark: CheckpointMark, target: int | None = None) -> Checkpoint:
        """Record the workspace's files now (`target`: for an undo, the checkpoint it goes
        back to). Raises CheckpointError."""
        pending = [Pending(mark, target)]
        [checkpoint] = self.record_pending(lambda: pending)
        return checkpoint

    def record_pending(self, take: Callable[[], list[Pending]]) -> list[Checkpoint]:
        """Record the checkpoints `take()` gives, in order, from one look at the workspace.

        `take` is called once that look is over, so every pending edit whose change it may
        have seen is in the list: each checkpoint's tree is the workspace seen, with the
        files touched by it and the edits after it put back as they were before them."""
        with self._locked():
            self._ensure()
            now, too_large = self._snapshot()
            pending = take()
            previous = self._last()
            recorded = []
            for index, asked in enumerate(pending):
                put_back: dict[str, Entry | None] = {}
                for later in reversed(pending[index:]):
                    put_back.update(later.before)  # the earliest edit's pre-image wins
                tree = self._overlaid(put_back) if put_back else now
                skipped = sorted(set(too_large) | {p for a in pending[index:] for p in a.too_large})
                mark = asked.mark
                checkpoint = Checkpoint(
                    id=(previous.id + 1) if previous else 1,
                    kind=mark.kind,
                    session=mark.session,
                    task=mark.task,
                    step=mark.step,
                    label=mark.label,
                    time=time.time(),
                    tree=tree,
                    skipped=skipped,
                    target=asked.target,
                    touches=mark.touches,
                )
                if previous is None or previous.tree != tree:
                    self._commit(tree, checkpoint)
                append_line(self.log_path, json.dumps(asdict(checkpoint)))
                recorded.append(checkpoint)
                previous = checkpoint
            return recorded

    def entries(self, paths: Sequence[str]) -> tuple[dict[str, Entry | None], list[str]]:
        """The files as they are now, their blobs written (None: absent), and those too
        large to record: what an edit about to change them must keep. No git process."""
        self._ensure()
        found: dict[str, Entry | None] = {}
        too_large = []
        for path in paths:
            full = self.root / path
            if os.path.realpath(full.parent) != str(full.parent):
                continue  # under a symlink: not in the tree, never restored
            try:
                status = os.lstat(full)
                if stat.S_ISLNK(status.st_mode):
                    target = os.readlink(full).encode("utf-8", "surrogateescape")
                    found[path] = Entry("120000", self._write_object("blob", target))
                elif not stat.S_ISREG(status.st_mode):
                    continue
                elif status.st_size > MAX_FILE_BYTES:
                    too_large.append(path)
                else:
                    mode = "100755" if status.st_mode & 0o100 else "100644"
                    found[path] = Entry(mode, self._write_object("blob", _read(full)))
            except FileNotFoundError:
                found[path] = None
        return found, too_large

    def _overlaid(self, entries: dict[str, Entry | None]) -> str:
        """The tree of the index with `entries` in place of what it holds for their paths,
        through a copy of the index (the index itself keeps the workspace's stat data)."""
        copy = self.git_dir / "agentls-overlay-index"
        shutil.copyfile(self.git_dir / "index", copy)
        lines = "".join(
            f"{e.mode} {e.blob}\t{p}\0" if e else f"0 {_NO_OBJECT}\t{p}\0"
            for p, e in entries.items()
        )
        try:
            env = {"GIT_INDEX_FILE": str(copy)}
            data = lines.encode("utf-8", "surrogateescape")
            self.git("update-index", "-z", "--index-info", data=data, env=env)
            return self.git("write-tree", env=env).decode().strip()
        finally:
            copy.unlink(missing_ok=True)

    def snapshot(self) -> tuple[str, list[str]]:
        """The tree of the workspace now (and the files too large to record), not listed as
        a checkpoint: what undo compares against."""
        with self._locked():
            self._ensure()
            return self._snapshot()

    def _snapshot(self) -> tuple[str, list[str]]:
        listed = self.git("ls-files", "-z", "-m", "-o", "-d", "--exclude-standard")
        # A nested repository is listed as its folder ("sub/"): it is not ours to record.
        paths = {p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p}
        paths = {p for p in paths if not p.endswith("/")}
        update, too_large, beyond_link = [], [], []
        real_parents: dict[str, bool] = {}
        for path in sorted(paths):
            parent = os.path.dirname(path)
            if parent not in real_parents:
                real_parents[parent] = os.path.realpath(self.root / parent) == str(
                    self.root / parent
                )
            if not real_parents[parent]:
                # Under a folder that became a symlink: gone from the tree (git itself
                # never follows it), and nothing outside the root is ever looked at.
                beyond_link.append(path)
                continue
            try:
                status = os.lstat(self.root / path)
            except FileNotFoundError:
                update.append(path)  # deleted: --remove takes it out of the index
                continue
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode) and status.st_size > MAX_FILE_BYTES:
                too_large.append(path)
            elif stat.S_ISREG(status.st_mode) or stat.S_ISLNK(status.st_mode):
                update.append(path)
        if too_large or beyond_link:
            gone = _z(too_large + beyond_link)
            self.git("update-index", "-z", "--force-remove", "--stdin", data=gone)
        if update:
            self.git(
                "update-index", "-z", "--add", "--remove", "--replace", "--stdin", data=_z(update)
            )
        return self._tree(changed=bool(update or too_large or beyond_link)), too_large

    def _tree(self, changed: bool) -> str:
        """The index's tree. When nothing changed, the one written last for this very
        index (write-tree rewrites it, so each has its own inode): a process less on most
        bash steps."""
        cache = self.git_dir / "agentls-tree"
        if not changed and cache.exists():
            key, _, tree = cache.read_text().partition(" ")
            if key == self._index_key():
                return tree
        tree = self.git("write-tree").decode().strip()
        _replace(cache, f"{self._index_key()} {tree}")
        return tree

    def _index_key(self) -> str:
        try:
            status = (self.git_dir / "index").stat()
        except FileNotFoundError:
            return "none"
        return f"{status.st_size}-{status.st_mtime_ns}-{status.st_ino}"

    def _commit(self, tree: str, checkpoint: Checkpoint) -> None:
        """A commit of the tree, so its objects stay reachable. Written here rather than by
        `git commit-tree`: a process less on every checkpoint."""
        head = self.git_dir / "refs" / "heads" / "checkpoints"
        parent = head.read_text().strip() if head.exists() else ""
        stamp = f"{int(checkpoint.time)} +0000"
        lines = [f"tree {tree}", *([f"parent {parent}"] if parent else [])]
        lines += [f"author {safe_git.NAME} <{safe_git.EMAIL}> {stamp}"]
        lines += [f"committer {safe_git.NAME} <{safe_git.EMAIL}> {stamp}", ""]
        lines += [f"checkpoint {checkpoint.id}: {checkpoint.label}".replace("\n", " "), ""]
        commit = self._write_object("commit", "\n".join(lines).encode("utf-8", "replace"))
        _replace(head, commit + "\n")

    def _write_object(self, kind: str, body: bytes) -> str:
        data = f"{kind} {len(body)}\0".encode() + body
        object_id = hashlib.sha1(data).hexdigest()
        path = self.git_dir / "objects" / object_id[:2] / object_id[2:]
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            _replace(path, zlib.compress(data))
        return object_id

    def _last(self) -> Checkpoint | None:
        """The newest checkpoint, read from the end of the log: a step's cost must not grow
        with the number of checkpoints."""
        try:
            with open(self.log_path, "rb") as log:
                end = log.seek(0, os.SEEK_END)
                start = end
                while start > 0:
                    start = max(0, start - 65536)
                    log.seek(start)
                    lines = log.read(end - start).split(b"\n")
                    # The first piece may be cut (unless the read began at the start).
                    for line in reversed(lines[1:] if start else lines):
                        checkpoint = _parse(line)
                        if checkpoint is not None:
                            return checkpoint
        except FileNotFoundError:
            pass
        return None

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint of this workspace, oldest first."""
        try:
            lines = self.log_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        return [c for c in map(_parse, lines) if c is not None]

    def differences(self, pairs: Sequence[tuple[str, str]]) -> list[list[Difference]]:
        """For each (tree, tree) pair, the files that differ, in one git process."""
        if not pairs:
            return []
        data = "".join(f"{a} {b}\n" for a, b in pairs).encode()
        out = self.git("diff-tree", "--stdin", "-r", "-z", "--no-renames", data=data)
        return _parse_diff_tree(out, pairs)

    def blobs(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The content of each blob, in one git process (a blob no longer found left out)."""
        unique = sorted(set(ids))
        if not unique:
            return {}
        out = self.git("cat-file", "--batch", data="".join(f"{i}\n" for i in unique).encode())
        contents, position = {}, 0
        for blob in unique:
            header_end = out.index(b"\n", position)
            header = out[position:header_end].split()
            if header[1] == b"missing":
                # Only in the repository's own store, and pruned from it since.
                position = header_end + 1
                continue
            size = int(header[2])
            contents[blob] = out[header_end + 1 : header_end + 1 + size]
            position = header_end + 1 + size + 1
        return contents

    def changed_in_session(self, session: str) -> list[str]:
        """The files changed since the session's first checkpoint, one line each."""
        first = next((c for c in self.checkpoints() if session and c.session == session), None)
        if first is None:
            return []
        now, _ = self.snapshot()
        [changes] = self.differences([(first.tree, now)])
        return [f"{d.path} ({_how(d)})" for d in changes]


class WorkspaceCheckpoints:
    """The loop's `Checkpoints`: git runs in a thread, and a failure only costs the
    checkpoint (logged), never the task.

    What a step needs is recorded before it returns, and nothing more: an edit's files (their
    pre-images) at once, the whole tree for a command or the task's end. The task's own
    checkpoint and the edits' trees are written in the background, in order."""

    def __init__(self, repository: ShadowRepository) -> None:
        self.repository = repository
        self._pending: list[Pending] = []
        self._taking = threading.Lock()
        self._writing = asyncio.Lock()
        self._background: asyncio.Future[None] | None = None

    async def record(self, mark: CheckpointMark) -> None:
        asked = Pending(mark)
        try:
            if mark.kind == "step" and mark.touches is not None:
                entries = self.repository.entries
                asked.before, asked.too_large = await asyncio.to_thread(entries, mark.touches)
        except (CheckpointError, OSError) as error:
            log.warning("no checkpoint taken: %s", error)
            return
        whole = mark.kind != "task" and mark.touches is None
        if whole and self._background is not None and not self._background.done():
            # A look at the workspace under way may predate a change this checkpoint must
            # see: it would take this checkpoint with it, and give it that older tree.
            await asyncio.shield(self._background)
        with self._taking:
            self._pending.append(asked)
        if mark.kind == "task" or mark.touches is not None:
            if self._background is None or self._background.done():
                self._background = asyncio.ensure_future(self._write())
            return
        # Shielded: a cancel while waiting must not lose the checkpoint.
        await asyncio.shield(self._write())

    async def settled(self) -> None:
        """Return once every checkpoint asked for so far is written: a step asked for while
        an earlier one is written could join its look at the workspace, taken before the
        earlier step's change landed (a review's files land back to back)."""
        if self._background is not None and not self._background.done():
            await asyncio.shield(self._background)

    async def _write(self) -> None:
        """Write every pending checkpoint (those added meanwhile too)."""
        async with self._writing:
            while self._pending:
                try:
                    await asyncio.to_thread(self.repository.record_pending, self._take)
                except (CheckpointError, OSError) as error:
                    log.warning("no checkpoint taken: %s", error)
                    self._take()  # the same failure again and again would never end

    def _take(self) -> list[Pending]:
        with self._taking:
            taken, self._pending = self._pending, []
        return taken

    async def changes_in_session(self, session: str) -> list[str]:
        try:
            return await asyncio.to_thread(self.repository.changed_in_session, session)
        except (CheckpointError, OSError) as error:
            log.warning("the session's changes are unknown: %s", error)
            return []


def checkpoints_for(root: Path) -> WorkspaceCheckpoints | None:
    """The workspace's checkpoints, or None (logged) when its state folder cannot be made."""
    try:
        return WorkspaceCheckpoints(ShadowRepository(root))
    except OSError as error:
        log.warning("checkpoints are off: %s", error)
        return None


def _parse(line: str | bytes) -> Checkpoint | None:
    try:
        return Checkpoint(**json.loads(line))
    except (ValueError, TypeError):
        return None  # a line cut by a crash, or the empty piece after the last newline


def _how(difference: Difference) -> str:
    if difference.before is None:
        return "created"
    return "deleted" if difference.after is None else "modified"


def _read(path: Path) -> bytes:
    """A file's bytes, the file itself (not a symlink put there since)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as file:
        return file.read()


def _replace(path: Path, data: str | bytes) -> None:
    """Write `path` whole or not at all (a crash leaves the old content)."""
    temporary = path.with_name(f".{path.name}.tmp")
    if isinstance(data, str):
        temporary.write_text(data)
    else:
        temporary.write_bytes(data)
    os.replace(temporary, path)


def _glob_escaped(path: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\!#" else c for c in path)


def _z(paths: list[str]) -> bytes:
    return "".join(p + "\0" for p in paths).encode("utf-8", "surrogateescape")


def _entry(mode: str, blob: str) -> Entry | None:
    return None if mode == "000000" else Entry(mode, blob)


def _parse_diff_tree(out: bytes, pairs: Sequence[tuple[str, str]]) -> list[list[Difference]]:
    """`diff-tree --stdin -z` output: a "<tree> <tree>" line per pair, then its records
    (":<mode> <mode> <blob> <blob> <status>" NUL "<path>" NUL)."""
    found: dict[tuple[str, str], list[Difference]] = {}
    current: list[Difference] = []
    position = 0
    while position < len(out):
        if out[position : position + 1] != b":":
            end = out.index(b"\n", position)
            first, second = out[position:end].decode().split()
            # A pair asked for twice is answered twice: keep one answer.
            current = found[(first, second)] = []
            position = end + 1
            continue
        meta_end = out.index(b"\0", position)
        path_end = out.index(b"\0", meta_end + 1)
        old_mode, new_mode, old_blob, new_blob, _ = out[position + 1 : meta_end].decode().split()
        path = out[meta_end + 1 : path_end].decode("utf-8", "surrogateescape")
        current.append(Difference(path, _entry(old_mode, old_blob), _entry(new_mode, new_blob)))
        position = path_end + 1
    return [found.get(pair, []) for pair in pairs]
