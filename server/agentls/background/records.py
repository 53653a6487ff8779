"""What a background task leaves on disk, read back by every door and every server: one
private folder per task under `$XDG_STATE_HOME/agentls/background/<workspace key>/<id>/`:

- `task.json`: what was asked, written once by whoever started it;
- `status.json`: where it stands, replaced whole (write, then rename) by the task's process
  as it goes, and by a door for what happens after it ended (reviewed);
- `log.jsonl`: its events (`agentls run -p --output-format stream-json`'s), steps as they
  happen, all of them once it ended;
- `tree/`: its worktree, kept until it is reviewed or discarded.

The files are the truth, not a server's memory: a server started after the editor was
closed lists the same tasks.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..disk.state import private_dir, state_base, workspace_key

ACTIVE = frozenset({"queued", "running"})
"""A task still to end: its process is (or should be) alive."""

ENDED = frozenset({"done", "failed", "error", "timeout", "cancelled"})

BRANCH_PREFIX = "agentls/background/"


@dataclass(frozen=True, kw_only=True)
class TaskRecord:
    """What was asked (`task.json`): all the task's process needs to run it."""

    id: str
    task: str
    """The user's words."""
    message: str
    """What the model is sent: the words with the active file and selection."""
    root: str
    """The user's repository (the workspace)."""
    branch: str
    base: str
    """The commit the task starts from: HEAD, or HEAD with the user's uncommitted changes."""
    tree: str
    created: float
    setup: str | None = None
    max_steps: int | None = None
    provider: str | None = None
    model: str | None = None
    max_running: int = 3
    sandbox_network: bool = False
    settings: dict[str, Any] | None = None
    """The editor's settings object, as it may set it (`AgentServer.raw_settings`): its
    permission rules and the rest apply to the task, under the fixed policy of a task
    nobody watches."""

    @property
    def title(self) -> str:
        return (self.task.strip().splitlines() or [""])[0][:80]

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TaskRecord:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})


@dataclass(kw_only=True)
class Status:
    """Where a task stands (`status.json`)."""

    status: str = "queued"
    """queued | running | done | failed | error | timeout | cancelled"""
    steps: int = 0
    tokens: int = 0
    cost: float | None = None
    started: float | None = None
    """When it left the queue and began to run."""
    ended: float | None = None
    pid: int | None = None
    error: str | None = None
    commit: str | None = None
    """The branch's commit, once it ended with a result."""
    reviewed: bool = False
    files: list[str] = field(default_factory=list)
    """The files its change touches (once ended)."""

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Status:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})


def tasks_folder(root: Path) -> Path:
    """The background tasks of the workspace `root`."""
    return private_dir(state_base() / "background" / workspace_key(root))


def new_id() -> str:
    """Short enough to type (`agentls tasks review 3f9c2a1b`), unique enough per workspace."""
    return uuid.uuid4().hex[:8]


def write_json(path: Path, value: dict[str, Any]) -> None:
    """`path` replaced whole: a reader sees the old file or the new one, never half."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(value, out, ensure_ascii=False)
    os.replace(temporary, path)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


@dataclass
class Entry:
    """One task as a door shows it: its record, its status, its folder."""

    folder: Path
    record: TaskRecord
    status: Status

    def save(self) -> None:
        write_json(self.folder / "status.json", asdict(self.status))

    def as_json(self) -> dict[str, Any]:
        """The listing's shape (docs/protocol.md, `agent.backgroundTasks`)."""
        record, status = self.record, self.status
        return {
            "id": record.id,
            "task": record.task,
            "title": record.title,
            "status": status.status,
            "steps": status.steps,
            "tokens": status.tokens,
            "cost": status.cost,
            "created": record.created,
            "started": status.started,
            "ended": status.ended,
            "branch": record.branch,
            "worktree": record.tree,
            "error": status.error,
            "reviewed": status.reviewed,
            "files": status.files,
            "log": str(self.folder / "log.jsonl"),
        }


def load(folder: Path) -> Entry | None:
    raw = read_json(folder / "task.json")
    if raw is None:
        return None
    with contextlib.suppress(TypeError):
        status = Status.from_json(read_json(folder / "status.json") or {})
        return Entry(folder, TaskRecord.from_json(raw), status)
    return None


def create(root: Path, record: TaskRecord, status: Status) -> Entry:
    folder = private_dir(tasks_folder(root) / record.id)
    write_json(folder / "task.json", asdict(record))
    entry = Entry(folder, record, status)
    entry.save()
    return entry


def listing(root: Path) -> list[Entry]:
    """Every task of the workspace, oldest first, a dead process's own noted (`alive`)."""
    base = tasks_folder(root)
    entries = [e for folder in base.iterdir() if folder.is_dir() and (e := load(folder))]
    entries.sort(key=lambda e: e.record.created)
    for entry in entries:
        notice_lost(entry)
    return entries


def find(root: Path, task_id: str) -> Entry | None:
    if not task_id or "/" in task_id or task_id.startswith("."):
        return None
    folder = tasks_folder(root) / task_id
    return load(folder) if folder.is_dir() else None


STARTING = 10.0
"""Seconds after its start in which a task's process may not show its own command line yet
(between fork and exec it is the starter's)."""


def alive(pid: int | None, folder: Path, created: float = 0.0) -> bool:
    """Whether the process `pid` is still this task's (a pid is reused once it ended)."""
    young = time.time() - created < STARTING
    if pid is None:
        return young  # not written yet by a process just started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # someone else's process now
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.parent.exists():
        return True  # no /proc to ask (macOS): believe the pid
    try:
        mine = str(folder).encode() in cmdline.read_bytes()
    except OSError:
        return False
    return mine or young


LOST = "its process ended without saying how the task ended (killed, or the machine restarted)"


def notice_lost(entry: Entry) -> None:
    """A task whose process is gone while it says it runs ended as an error, said once."""
    status = entry.status
    if status.status in ACTIVE and not alive(status.pid, entry.folder, entry.record.created):
        # Read again: the process may have written its end since we read.
        fresh = load(entry.folder)
        if fresh is not None and fresh.status.status not in ACTIVE:
            entry.status = fresh.status
            return
        status.status, status.error, status.ended = "error", LOST, time.time()
        with contextlib.suppress(OSError):
            entry.save()
