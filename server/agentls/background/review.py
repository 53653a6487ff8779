"""What reviewing a background task proposes: its change (the branch against its base),
file by file, rebased onto what the user's files hold now.

A hunk of the task's applies where the user left its lines as they were at the base (its
offsets moved by what the user added or removed above it); one whose lines the user changed
too, or that touches a change of theirs, is a conflict: named, never proposed, never forced.
A file the task created, deleted or changed that the user created, deleted or changed
differently meanwhile is a conflict as a whole. Binary files are not proposed (an editor
reviews text): they are named, and stay on the branch.

A review never writes through a link, nor makes, changes or removes one: an editor writes
by name and follows links (it cannot be told not to), so a file is declined, with its
reason, before anything is sent, when it is a link on either side, when a folder on its way
was a link at the base (a task that replaced the link with a folder), or when the walk from
the root to it in the user's files, following no link, meets one (`disk.files`). It stays
on the branch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from ..disk import files
from ..edits import Hunk, apply_hunks, line_hunks
from ..interfaces import Change
from ..tasktree.worktree import git

Kind = Literal["create", "change", "delete"]
ABSENT, LINK, SUBMODULE = "000000", "120000", "160000"
"""git's modes in a diff: no file on that side; a symbolic link (its blob is the target); a
submodule (a commit, no blob)."""


@dataclass(kw_only=True)
class FileReview:
    """One file of the task's change, as it would land in the user's files now."""

    path: str
    kind: Kind
    change: Change | None = None
    """What is proposed (create, change); None for a delete, or when nothing applies."""
    conflicts: list[str] = field(default_factory=list)
    """What is not proposed, in words (`change of line 4: you changed those lines too`)."""
    hunks: int = 0
    """The task's hunks in this file (1 for a file declined as a whole)."""
    declined: str = ""
    """Why the file is not put to the user at all: a link on the way or at its place."""

    @property
    def proposed(self) -> bool:
        if self.declined:
            return False
        return self.change is not None or (self.kind == "delete" and not self.conflicts)


@dataclass
class ReviewPlan:
    files: list[FileReview] = field(default_factory=list)
    binary: list[str] = field(default_factory=list)


def rebase(base: str, task: str, current: str) -> tuple[list[Hunk], list[Hunk]]:
    """The task's hunks (base → task) moved onto `current`, and those that conflict with
    what changed from `base` to `current` (on the base's lines); a hunk `current` has
    already is neither."""
    theirs = line_hunks(base, task)
    if current == base:
        return theirs, []
    users = line_hunks(base, current)
    moved, conflicting = [], []
    for hunk in theirs:
        if hunk in users:
            continue  # the user made the same change (a review before this one): it is there
        # Touching counts: git's merge, too, refuses changes to adjacent lines.
        if any(hunk.start <= u.end and u.start <= hunk.end for u in users):
            conflicting.append(hunk)
            continue
        before = [u for u in users if u.end <= hunk.start]
        shift = sum(len(u.text) - (u.end - u.start) for u in before)
        lines = sum(u.new_line_count - u.old_line_count for u in before)
        start, end = hunk.start + shift, hunk.end + shift
        if current[start:end] != base[hunk.start : hunk.end]:
            conflicting.append(hunk)
            continue
        moved.append(
            Hunk(
                start=start,
                end=end,
                text=hunk.text,
                line=hunk.line + lines,
                old_line_count=hunk.old_line_count,
                new_line_count=hunk.new_line_count,
            )
        )
    return moved, conflicting


YOU_CHANGED = "you changed those lines since the task started"


def _blob(root: Path, commit: str, path: str) -> bytes:
    out = git(["cat-file", "blob", f"{commit}:{path}"], root)
    return out.encode("utf-8", "surrogateescape")


def _text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _current(root: Path, path: str, open_documents: Mapping[Path, str]) -> str | bytes | None:
    """What the user has now: the editor's text of an open file, else the disk's; None for
    no file; bytes for a file that is not text."""
    target = root / path
    if target in open_documents:
        return open_documents[target]
    if not target.exists() and not target.is_symlink():
        return None
    try:
        return files.read_text(root, target)
    except (OSError, files.NotText, ValueError):
        return b""


@dataclass(frozen=True)
class Changed:
    """One file of the task's diff: git's status letter (A, D, M, T), path, and modes at the
    base and on the branch (ABSENT where it is not)."""

    letter: str
    path: str
    before: str
    after: str

    @property
    def kind(self) -> Kind:
        return "create" if self.letter == "A" else "delete" if self.letter == "D" else "change"


def changed_paths(root: Path, base: str, commit: str) -> list[Changed]:
    """Each file the task's commit changed from its base."""
    out = git(["diff", "--raw", "-z", "--no-renames", base, commit], root)
    fields = out.split("\0")
    changed = []
    for header, path in zip(fields[0:-1:2], fields[1::2], strict=False):
        before, after, _, _, status = header.lstrip(":").split()
        changed.append(Changed(status[0], path, before, after))
    return changed


def in_the_way(root: Path, path: str) -> str:
    """Why `path` cannot be changed in the user's files now, walked from `root` one name at a
    time following no link: a link at its place or on the way, or no folder on the way.
    Empty when nothing is in the way (a path missing from some folder on is fine)."""
    try:
        files.refuse_links(root, root / path)
    except files.PathChanged as error:
        return f"{error.reason} in your files; a review never writes through a link"
    except OSError as error:
        return f"it cannot be reached in your files ({error.strerror or error})"
    return ""


class _Links:
    """The links the task's diff names at the base, and the folders the branch has."""

    def __init__(self, root: Path, base: str, changed: list[Changed]) -> None:
        self.root, self.base = root, base
        self.at_base = {c.path for c in changed if c.before == LINK}
        self.folders = {
            parent.as_posix()
            for c in changed
            if c.after != ABSENT
            for parent in PurePosixPath(c.path).parents
        }

    def target(self, commit: str, path: str) -> str:
        return files.shown_link(_blob(self.root, commit, path).decode("utf-8", "replace"))

    def declined(self, entry: Changed, commit: str) -> str:
        """Why `entry` is not put to the user, from what git recorded; empty if nothing."""
        path, never = entry.path, "a review never makes, changes or removes a link"
        if SUBMODULE in (entry.before, entry.after):
            return f"{path} is a submodule, which a review never changes"
        if entry.after == LINK:
            return f"the task made {path} a link to {self.target(commit, path)}; {never}"
        if entry.before == LINK:
            was = f"{path} was a link to {self.target(self.base, path)} when the task started"
            if path in self.folders:
                done = "replaced it with a folder"
            else:
                done = "deleted it" if entry.after == ABSENT else "replaced it with a file"
            return f"{was}, and the task {done}; {never}"
        for parent in PurePosixPath(path).parents:
            if parent.as_posix() in self.at_base:
                folder = parent.as_posix()
                return (
                    f"{folder} was a link to {self.target(self.base, folder)} when the task "
                    "started, and the task replaced it with a folder; a review never writes "
                    "where a link was"
                )
        return ""


def plan(
    root: Path,
    base: str,
    commit: str,
    open_documents: Mapping[Path, str],
    tool: str,
) -> ReviewPlan:
    """The review of `commit` against `base` in the user's files at `root`."""
    result = ReviewPlan()
    changed = changed_paths(root, base, commit)
    links = _Links(root, base, changed)
    for entry in changed:
        path, letter = entry.path, entry.letter
        declined = links.declined(entry, commit) or in_the_way(root, path)
        if declined:
            result.files.append(FileReview(path=path, kind=entry.kind, hunks=1, declined=declined))
            continue
        before = None if letter == "A" else _text(_blob(root, base, path))
        after = None if letter == "D" else _text(_blob(root, commit, path))
        if (letter != "A" and before is None) or (letter != "D" and after is None):
            result.binary.append(path)
            continue
        now = _current(root, path, open_documents)
        if isinstance(now, bytes):
            result.binary.append(path)
            continue
        result.files.append(_file(root / path, path, before, after, now, tool))
    return result


def _file(
    target: Path, path: str, before: str | None, after: str | None, now: str | None, tool: str
) -> FileReview:
    if after is None:  # the task deleted it
        review = FileReview(path=path, kind="delete", hunks=1)
        if now is None:
            review.kind = "delete"
            review.conflicts = []
            review.hunks = 0  # gone already: nothing to do
        elif now != before:
            review.conflicts = [f"deletion of {path}: {YOU_CHANGED}"]
        return review
    if before is None:  # the task created it
        review = FileReview(path=path, kind="create", hunks=1)
        if now is None:
            review.change = Change(
                path=target, old_text=None, new_text=after, hunks=line_hunks("", after), tool=tool
            )
        elif now != after:
            review.conflicts = [f"new file {path}: you made a file of that name meanwhile"]
        return review
    review = FileReview(path=path, kind="change")
    if now is None:
        review.hunks = len(line_hunks(before, after))
        review.conflicts = [f"changes to {path}: you deleted the file since the task started"]
        return review
    moved, conflicting = rebase(before, after, now)
    review.hunks = len(moved) + len(conflicting)
    review.conflicts = [f"{h.describe()} of {path}: {YOU_CHANGED}" for h in conflicting]
    if moved:
        review.change = Change(
            path=target, old_text=now, new_text=apply_hunks(now, moved), hunks=moved, tool=tool
        )
    return review
