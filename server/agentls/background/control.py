"""Starting, cancelling, discarding and forgetting background tasks: what every door does
the same way (the LSP commands, `agentls run --background`, `agentls tasks`).

Starting answers at once: the base commit is taken here (so the task starts from what the
user sees at that moment), the record written, and the task's process started through the
launcher like every program agentls runs (an allow-listed environment plus the model's
connection variables, as a batch's workers get; a session of its own, so the task outlives
the server); the worktree, provisioning and agent happen in that process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..disk.state import private_dir, state_dir
from ..shell import launch
from ..tasktree import snapshot, worktree
from ..tasktree.environment import worker_environment
from . import records
from .records import ACTIVE, BRANCH_PREFIX, Entry, Status, TaskRecord

if TYPE_CHECKING:
    from ..settings.assembly import Settings

DAY = 86400.0


@dataclass(frozen=True, kw_only=True)
class Options:
    """What the settings say of background tasks (and of any task: its bounds, its model)."""

    setup: str | None = None
    max_running: int = 3
    keep_days: float = 7.0
    max_steps: int | None = None
    provider: str | None = None
    model: str | None = None
    sandbox_network: bool = False
    settings: dict[str, Any] | None = None
    """The rest of the settings object (an editor's), for the task's own settings."""

    @classmethod
    def of(cls, settings: Settings, raw: dict[str, Any] | None = None) -> Options:
        """The options the settings give, for every door; `raw` is an editor's settings
        object, whose rules (a deny, an ask) and the rest hold in the task too."""
        return cls(
            setup=settings.background_setup,
            max_running=settings.background_max_running,
            keep_days=settings.background_keep_days,
            max_steps=settings.max_steps,
            provider=settings.provider,
            model=settings.model,
            sandbox_network=settings.sandbox_network,
            settings=raw,
        )


class BackgroundError(Exception):
    """A background task could not be started, found or changed; the words say why."""


def start(root: Path, task: str, message: str, options: Options) -> Entry:
    """A new task, queued, its process started. Raises BackgroundError."""
    root = root.resolve()
    task_id = records.new_id()
    try:
        base = snapshot.take(root, task_id)
    except worktree.TreeError as error:
        raise BackgroundError(f"a background task needs a git repository: {error}") from None
    folder = records.tasks_folder(root) / task_id
    record = TaskRecord(
        id=task_id,
        task=task,
        message=message,
        root=str(root),
        branch=BRANCH_PREFIX + task_id,
        base=base,
        tree=str(folder / "tree"),
        created=time.time(),
        setup=options.setup,
        max_steps=options.max_steps,
        provider=options.provider,
        model=options.model,
        max_running=options.max_running,
        sandbox_network=options.sandbox_network,
        settings=options.settings,
    )
    entry = records.create(root, record, Status())
    argv = [sys.executable, "-m", "agentls.background.process", str(entry.folder)]
    # An empty folder of its own as cwd: Python before 3.11, which has no PYTHONSAFEPATH,
    # imports from there first, and the task's tree lies in entry.folder.
    cwd = private_dir(entry.folder / "cwd")
    try:
        with open(entry.folder / "process.log", "ab") as log:
            process = launch.popen(
                launch.own(argv, cwd, worker_environment(), None),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
    except OSError as error:
        entry.status = Status(status="error", error=f"its process could not start: {error}")
        entry.save()
        raise BackgroundError(f"the task's process could not start: {error}") from None
    # Reaped by a thread of ours while we live; once we are gone, by init. The process
    # writes its pid itself: only it writes its status while it lives.
    threading.Thread(target=process.wait, daemon=True).start()
    return entry


def found(root: Path, task_id: str) -> Entry:
    entry = records.find(root.resolve(), task_id)
    if entry is None:
        raise BackgroundError(f"no background task {task_id!r} in this workspace")
    records.notice_lost(entry)
    return entry


def cancel(root: Path, task_id: str) -> Entry:
    """Ask the task's process to stop (it ends `cancelled`, its commands' processes too)."""
    entry = found(root, task_id)
    status = entry.status
    if status.status not in ACTIVE:
        return entry
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if status.pid is not None and records.alive(status.pid, entry.folder, entry.record.created):
            os.kill(status.pid, signal.SIGTERM)
    return entry


def discard(root: Path, task_id: str) -> None:
    """The task gone: stopped if it runs, its worktree, branch, base ref and record removed."""
    entry = found(root, task_id)
    pid = entry.status.pid if entry.status.status in ACTIVE else None
    if pid is not None and records.alive(pid, entry.folder, entry.record.created):
        launch.kill_group(pid, signal.SIGTERM)
        _wait_gone(entry, 10.0)
    remove(entry)


def _wait_gone(entry: Entry, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and records.alive(entry.status.pid, entry.folder):
        time.sleep(0.05)
    if entry.status.pid is not None and records.alive(entry.status.pid, entry.folder):
        launch.kill_group(entry.status.pid)


def remove_tree(entry: Entry) -> None:
    """The task's worktree gone (its branch stays), and the tree's own checkpoints."""
    root, tree = Path(entry.record.root), Path(entry.record.tree)
    with contextlib.suppress(worktree.TreeError, OSError):
        worktree.remove(root, tree)
    with contextlib.suppress(OSError):
        shutil.rmtree(state_dir("checkpoints", tree), ignore_errors=True)


def remove(entry: Entry) -> None:
    remove_tree(entry)
    with contextlib.suppress(worktree.TreeError, OSError):
        snapshot.forget(Path(entry.record.root), entry.record.id, entry.record.branch)
    shutil.rmtree(entry.folder, ignore_errors=True)


def clean(root: Path, keep_days: float) -> list[str]:
    """Discard the tasks that ended more than `keep_days` ago; their ids."""
    limit = time.time() - keep_days * DAY
    gone = []
    for entry in records.listing(root.resolve()):
        ended = entry.status.ended
        if entry.status.status not in ACTIVE and ended is not None and ended < limit:
            remove(entry)
            gone.append(entry.record.id)
    return gone
