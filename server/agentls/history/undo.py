"""Undoing the agent's work back to a checkpoint, without losing the user's.

Only files the agent changed since the checkpoint (its edits and bash steps, or an earlier
undo) are put back; a file whose content is no longer what the agent left (the user changed
it since) is a conflict: listed, left alone, and put back only when the user names it in
`overwrite`. Files the agent created are removed, files it deleted come back.

Files open in the editor change through the editor (`Editor.propose`, reviewable like any
edit; `Editor.delete`); the others are written here, atomically.

Undo acts at the path git recorded, exactly: nothing on the way is resolved. Each write,
removal and folder it makes walks from the root one name at a time without following a
link (`disk.files`), so a folder swapped for a link since the checkpoint (a `.gitignore`
hides it from the checkpoints) declines that file, with the reason, and never sends the
write where the link points. A link standing at the file's own place is replaced itself on
disk; an editor would write through it, so such a file is not given to the editor.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from ..counts import counted
from ..disk import files
from ..disk.paths import PathError, refuse_git_metadata
from ..edits import line_hunks
from ..interfaces import Change, CheckpointMark, Landed
from .checkpoints import Checkpoint, CheckpointError, Entry, ShadowRepository

REGULAR_MODES = ("100644", "100755")


class Editor(Protocol):
    """What undo needs of a front end."""

    root: Path

    def open_text(self, path: Path) -> str | None:
        """The editor's text of `path` if it has the file open, else None."""
        ...

    async def propose(self, change: Change) -> Landed:
        """Change an open file through the editor."""
        ...

    async def delete(self, path: Path) -> bool:
        """Delete an open file through the editor; False if it declined."""
        ...


@dataclass
class Restore:
    path: str
    entry: Entry | None
    """What the file was at the checkpoint; None: it did not exist (remove it)."""


@dataclass
class UndoPlan:
    target: Checkpoint
    restores: list[Restore] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    differing: set[str] = field(default_factory=set)
    """Every recorded file that differed from the checkpoint before the undo."""


@dataclass(kw_only=True)
class UndoResult:
    target: Checkpoint
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    """Refused by the editor's review, or not restorable (a link on the way, a path now
    outside); each with its reason in `reasons`."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Why each declined file was left: `not restored: a is a link to b; put it back by hand`."""
    unrecorded: list[str] = field(default_factory=list)
    """Files that a `.gitignore` the agent changed kept out of the checkpoints: visible again
    once it is put back, but nobody knows who made them, so they are left for the user."""

    def as_dict(self) -> dict[str, object]:
        return {
            "checkpoint": self.target.id,
            "restored": self.restored,
            "removed": self.removed,
            "conflicts": self.conflicts,
            "declined": self.declined,
            "reasons": self.reasons,
            "unrecorded": self.unrecorded,
            "outcome": self.outcome(),
        }

    def outcome(self) -> str:
        """What the undo did, for the user: `undone: 1 file put back, 0 removed`."""
        line = (
            f"undone: {counted(len(self.restored), 'file')} put back, {len(self.removed)} removed"
        )
        left = self.conflicts + self._declined_words() + self.unrecorded
        return line + (f"; not undone: {', '.join(left)}" if left else "")

    def decline(self, path: str, reason: str) -> None:
        self.declined.append(path)
        self.reasons[path] = reason

    def _declined_words(self) -> list[str]:
        """Each declined file with its reason: `a/x.txt (not restored: a is a link to b; ...)`."""
        return [f"{p} ({self.reasons[p]})" if p in self.reasons else p for p in self.declined]

    def note(self) -> str:
        """What the model is told at its next task."""
        parts = [
            f"The user undid the changes made since checkpoint {self.target.id} "
            f"({self.target.label})."
        ]
        for title, paths in (
            ("Files put back as they were", self.restored),
            ("Files removed (created after it)", self.removed),
            (
                "Not undone (the user changed them since, or declined)",
                self.conflicts + self._declined_words(),
            ),
            ("Not recorded, left as they are (hidden by a changed .gitignore)", self.unrecorded),
        ):
            if paths:
                parts.append(f"{title}: {', '.join(paths)}.")
        parts.append("Read files again before relying on what you remember of them.")
        return "(" + " ".join(parts) + ")"


def default_target(checkpoints: list[Checkpoint]) -> Checkpoint | None:
    """Before the last task not undone yet: an undo back to a task's start moves the default
    to the task before it, and a new task after an undo is the default again."""
    limit = None
    for checkpoint in reversed(checkpoints):
        if checkpoint.kind == "undo" and checkpoint.target is not None:
            limit = checkpoint.target if limit is None else min(limit, checkpoint.target)
        elif checkpoint.kind == "task" and (limit is None or checkpoint.id < limit):
            return checkpoint
    return None


def plan(
    repository: ShadowRepository, target_id: int | None, overwrite: Collection[str] = ()
) -> UndoPlan:
    """What undoing to `target_id` (default: before the last task) would change."""
    checkpoints = repository.checkpoints()
    if target_id is None:
        target = default_target(checkpoints)
    else:
        target = next((c for c in checkpoints if c.id == target_id), None)
    if target is None or target.kind == "end":
        raise CheckpointError("no such checkpoint" if target_id is not None else "no task to undo")
    later = checkpoints[checkpoints.index(target) :]
    now, too_large_now = repository.snapshot()
    trees = [c.tree for c in later] + [now]
    # The agent's changes: what each step (or undo) changed until the next checkpoint.
    agents = [(i, c) for i, c in enumerate(later) if c.kind in ("step", "undo")]
    pairs = [(trees[i], trees[i + 1]) for i, _ in agents]
    *step_changes, since = repository.differences([*pairs, (target.tree, now)])
    left_by_agent: dict[str, Entry | None] = {}
    for (_, checkpoint), changes in zip(agents, step_changes, strict=True):
        # An edit changes its file only: what else changed meanwhile (the user typing in
        # another file during the review) stays the user's.
        touched = checkpoint.touches
        left_by_agent.update(
            (d.path, d.after) for d in changes if touched is None or d.path in touched
        )
    unsure = set(too_large_now) | set(target.skipped)
    result = UndoPlan(target, differing={d.path for d in since})
    for difference in since:
        path = difference.path
        if path not in left_by_agent:
            continue  # only the user changed it: not undo's to touch
        if path in overwrite or (path not in unsure and difference.after == left_by_agent[path]):
            result.restores.append(Restore(path, difference.before))
        else:
            result.conflicts.append(path)
    return result


class _Declined(Exception):
    """The file is left as it is; the message says why, for the user and the model."""


async def apply(repository: ShadowRepository, undo: UndoPlan, editor: Editor) -> UndoResult:
    """Carry out the plan; the caller records an "undo" checkpoint first."""
    result = UndoResult(target=undo.target, conflicts=list(undo.conflicts))
    blobs = repository.blobs([r.entry.blob for r in undo.restores if r.entry is not None])
    for restore in undo.restores:
        name = restore.path
        try:
            done = await _put_back(editor, restore, blobs)
        except _Declined as declined:
            result.decline(name, str(declined))
            continue
        if not done:
            result.conflicts.append(name)  # unsaved typing in the editor: the user's
        else:
            (result.removed if restore.entry is None else result.restored).append(name)
    return result


async def _put_back(editor: Editor, restore: Restore, blobs: dict[str, bytes]) -> bool:
    """Put one file back as it was (or remove it); False for a conflict.
    Raises _Declined."""
    entry = restore.entry
    done = "restored" if entry is not None else "removed"
    try:
        target = _recorded_path(editor.root, restore.path)
    except PathError as error:
        raise _Declined(f"not {done}: {error}") from None
    if entry is not None and entry.mode not in REGULAR_MODES:
        raise _Declined("not restored: it was a link or a submodule, which undo never makes")
    if entry is not None and entry.blob not in blobs:
        # Its blob is gone (see ShadowRepository.blobs).
        raise _Declined("not restored: its recorded content is gone")
    content = blobs[entry.blob] if entry is not None else None
    open_text = editor.open_text(target)
    if open_text is None:
        _on_disk(editor.root, target, content, entry)
        return True
    # The editor changes a file by its name and follows links (it cannot be told not to):
    # what is, or lies beyond, a link is not given to it.
    with _declined_on_failure(done):
        files.refuse_links(editor.root, target)
    if open_text != _disk_text(editor.root, target):
        return False
    if not await _through_editor(editor, target, open_text, content):
        raise _Declined(f"not {done}: rejected in the editor's review")
    return True


def _recorded_path(root: Path, name: str) -> Path:
    """`name` (a path git recorded) under the root, exactly as recorded: nothing on the way
    is resolved, so a link put there since is met by the write's own walk (and refused),
    never followed to another file."""
    recorded = PurePosixPath(name)
    if recorded.is_absolute() or not recorded.parts or ".." in recorded.parts:
        raise PathError(f"{name!r} is not a path under the workspace root")
    target = root.joinpath(*recorded.parts)
    refuse_git_metadata(root, target)
    return target


def _on_disk(root: Path, target: Path, content: bytes | None, entry: Entry | None) -> None:
    """Write or remove `target` through folder descriptors that follow no link. A link
    standing at `target` itself is replaced or removed, never what it points to. Raises
    _Declined."""
    with _declined_on_failure("restored" if content is not None else "removed"):
        if content is None:
            files.remove(root, target)
        else:
            executable = entry is not None and entry.mode == "100755"
            files.write_atomic(root, target, content, executable=executable, replace_link=True)


@contextlib.contextmanager
def _declined_on_failure(done: str) -> Iterator[None]:
    """A failure on disk as the reason the file is left (`done`: restored or removed)."""
    try:
        yield
    except files.PathChanged as error:  # a link or a file on the way: the user can see to it
        by_hand = "put it back by hand" if done == "restored" else "remove it by hand"
        raise _Declined(f"not {done}: {error.reason}; {by_hand}") from None
    except OSError as error:  # a folder in place of the file, a full disk
        raise _Declined(f"not {done}: {error.strerror or error}") from None


async def _through_editor(
    editor: Editor, target: Path, open_text: str, content: bytes | None
) -> bool:
    if content is None:
        return await editor.delete(target)
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise _Declined("not restored: the editor has it open, and it is no text") from None
    landed = await editor.propose(
        Change(
            path=target,
            old_text=open_text,
            new_text=text,
            hunks=line_hunks(open_text, text),
            tool="undo",
        )
    )
    return landed.applied and landed.text in (text, None)


def _disk_text(root: Path, path: Path) -> str | None:
    try:
        return files.read_text(root, path)
    except (OSError, files.NotText):
        return None


def _checkpoint_words(checkpoint: Checkpoint, task: str, changed: list[Any]) -> str:
    """A checkpoint for a picker: `fix the parser (step 2: bash: make; 1 file differs)`."""
    where = (
        f"step {checkpoint.step}: {checkpoint.label}"
        if checkpoint.kind == "step"
        else f"before the {checkpoint.kind}"
    )
    differ = "1 file differs" if len(changed) == 1 else f"{len(changed)} files differ"
    return f"{task} ({where}; {differ})"


def listing(repository: ShadowRepository, limit: int = 50) -> list[dict[str, object]]:
    """The newest `limit` undo targets, newest first, each with the files that differ from
    the workspace now (what undoing to it may touch)."""
    checkpoints = repository.checkpoints()
    titles = {(c.session, c.task): c.label for c in checkpoints if c.kind == "task"}
    listed = [c for c in checkpoints if c.kind != "end"][-limit:]
    if not listed:
        return []  # and no first recording of the whole workspace just to say so
    now, _ = repository.snapshot()
    differences = repository.differences([(c.tree, now) for c in listed])
    return [
        {
            "id": c.id,
            "kind": c.kind,
            "task": titles.get((c.session, c.task), c.label),
            "step": c.step,
            "label": c.label,
            "time": c.time,
            "files": [d.path for d in changed],
            "description": _checkpoint_words(c, titles.get((c.session, c.task), c.label), changed),
        }
        for c, changed in reversed(list(zip(listed, differences, strict=True)))
    ]


async def undo(
    repository: ShadowRepository,
    editor: Editor,
    target_id: int | None,
    overwrite: Collection[str],
    session: str,
    task: int,
) -> UndoResult:
    """Undo to a checkpoint: plan, record the workspace as it is (so the undo can itself be
    undone, and its changes count as agentls's, not the user's), then put files back.
    Raises CheckpointError."""
    undo_plan = await asyncio.to_thread(plan, repository, target_id, overwrite)
    label = f"before undoing to checkpoint {undo_plan.target.id}"
    mark = CheckpointMark(kind="undo", session=session, task=task, step=None, label=label)
    await asyncio.to_thread(repository.record, mark, undo_plan.target.id)
    result = await apply(repository, undo_plan, editor)
    if any(Path(p).name == ".gitignore" for p in result.restored + result.removed):
        result.unrecorded = await asyncio.to_thread(_unrecorded, repository, undo_plan)
    return result


def _unrecorded(repository: ShadowRepository, undo_plan: UndoPlan) -> list[str]:
    """Files that differ from the checkpoint now but did not before the undo: a rule of a
    .gitignore the undo took back had hidden them."""
    now, _ = repository.snapshot()
    [after] = repository.differences([(undo_plan.target.tree, now)])
    return [d.path for d in after if d.path not in undo_plan.differing]
