"""Undoing the agent's work back to a checkpoint, without losing the user's.

Only files the agent changed since the checkpoint (its edits and bash steps, or an earlier
undo) are put back; a file whose content is no longer what the agent left (the user changed
it since) is a conflict: listed, left alone, and put back only when the user names it in
`overwrite`. Files the agent created are removed, files it deleted come back.

Files open in the editor change through the editor (`Editor.propose`, reviewable like any
edit; `Editor.delete`); the others are written here, atomically, each path checked to lie
inside the root at the moment it is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..counts import counted
from ..disk import files
from ..disk.paths import PathError, refuse_git_metadata, resolve
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


@dataclass
class UndoResult:
    target: Checkpoint
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    """Refused by the editor's review, or not restorable (a symlink, a path now outside)."""
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
            "unrecorded": self.unrecorded,
            "outcome": self.outcome(),
        }

    def outcome(self) -> str:
        """What the undo did, for the user: `undone: 1 file put back, 0 removed`."""
        line = (
            f"undone: {counted(len(self.restored), 'file')} put back, {len(self.removed)} removed"
        )
        left = self.conflicts + self.declined + self.unrecorded
        return line + (f"; not undone: {', '.join(left)}" if left else "")

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
                self.conflicts + self.declined,
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


async def apply(repository: ShadowRepository, undo: UndoPlan, editor: Editor) -> UndoResult:
    """Carry out the plan; the caller records an "undo" checkpoint first."""
    result = UndoResult(undo.target, conflicts=list(undo.conflicts))
    blobs = repository.blobs([r.entry.blob for r in undo.restores if r.entry is not None])
    for restore in undo.restores:
        entry, name = restore.entry, restore.path
        try:
            target = _link_itself(editor.root, name)
            refuse_git_metadata(editor.root, target)
        except PathError:
            result.declined.append(name)  # the path leads out of the root now
            continue
        if entry is not None and entry.mode not in REGULAR_MODES:
            result.declined.append(name)  # a symlink or submodule is not ours to make
            continue
        if entry is not None and entry.blob not in blobs:
            result.declined.append(name)  # its blob is gone (see ShadowRepository.blobs)
            continue
        content = blobs[entry.blob] if entry is not None else None
        open_text = editor.open_text(target)
        if open_text is None:
            try:
                _write(editor.root, target, content, entry)
            except OSError:  # a folder on the way swapped for a symlink, a full disk
                result.declined.append(name)
                continue
        elif open_text != _disk_text(editor.root, target):
            result.conflicts.append(name)  # unsaved typing in the editor: the user's
            continue
        elif not await _through_editor(editor, target, open_text, content):
            result.declined.append(name)
            continue
        (result.removed if content is None else result.restored).append(name)
    return result


async def _through_editor(
    editor: Editor, target: Path, open_text: str, content: bytes | None
) -> bool:
    if content is None:
        return await editor.delete(target)
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return False  # an editor buffer holds text only
    landed = await editor.propose(
        Change(target, open_text, text, line_hunks(open_text, text), "undo")
    )
    return landed.applied and landed.text in (text, None)


def _link_itself(root: Path, name: str) -> Path:
    """`name` (a path git recorded) under the root, its folders resolved but not the file
    itself: undo removes or replaces a symlink the agent made, never what it points to."""
    path = Path(name)
    folder = resolve(root, str(path.parent)) if path.parent != Path(".") else root
    return folder / path.name


def _write(root: Path, target: Path, content: bytes | None, entry: Entry | None) -> None:
    if content is None or target.is_symlink():
        # The link the agent left in place of a file goes, and the file comes back.
        files.remove(root, target)
    if content is not None:
        executable = entry is not None and entry.mode == "100755"
        files.write_atomic(root, target, content, executable=executable)


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
    mark = CheckpointMark("undo", session, task, None, label)
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
