"""`python -m agentls.background.process FOLDER`: one background task's own process, started
by a door through the launcher (`control.start`) in a session of its own, so that closing
the editor or restarting the language server does not end it.

It waits in the queue (`slots`), runs the task as a batch runs one (`tasktree.runner.TaskRun`:
the worktree at the task's base, the ignored files `.worktreeinclude` names, the
`background.setup` command in the sandbox, the agent with nobody to ask, the result committed
on the task's branch), and writes where it stands to `status.json` as it goes. SIGTERM
cancels it (`agentls tasks cancel`, the editor's Cancel): the loop stops its commands'
process groups, and the task ends `cancelled`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from ..disk.paths import relative
from ..disk.state import append_line
from ..interfaces import Change, Decision, Landed, Unanswered
from ..tasktree import worktree
from ..tasktree.adapters import BatchWorkspace
from ..tasktree.runner import TaskRun, TaskSpec
from . import include, records, slots

LEFT_FOR_REVIEW = (
    "Nobody can be asked while a background task runs, and a permission rule asks about "
    "this, so it was not done. Do not retry it: finish what you can without it, and say in "
    "your summary what is left for the user to do when they review your changes."
)


class ReviewWorkspace(BatchWorkspace):
    """Edits written in the task's worktree; one a permission rule asks about is left for
    the user's review, and the model told so."""

    async def propose(self, change: Change) -> Landed:
        if not change.reviewed:
            return await super().propose(change)
        self.events.send("edit", path=relative(self.root, change.path), applied=False)
        return Landed(False, None, LEFT_FOR_REVIEW)


class ReviewApprover:
    """Nobody to ask: a command (or tool) a rule asks about is refused, and the model told
    to leave it for the review; a project's hooks and servers and a plan are refused."""

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        raise Unanswered(LEFT_FOR_REVIEW)

    async def approve_plan(self, plan: str) -> bool:
        return False

    async def approve_project(self, what: str) -> bool:
        return False


class BackgroundRun(TaskRun):
    """A batch's task run on the user's repository, provisioned from the user's folder."""

    def __init__(self, spec: TaskSpec, root: Path, live: Any = None) -> None:
        super().__init__(spec, live)
        self.root = root

    def provision(self, tree: worktree.Tree) -> None:
        copied = include.copy(self.root, tree.path)
        if copied:
            self.events.send("included", paths=copied)

    def adapters(self, tree: worktree.Tree) -> tuple[BatchWorkspace, Any]:
        return ReviewWorkspace(tree.path, self.events), ReviewApprover()


def spec_of(record: records.TaskRecord) -> TaskSpec:
    return TaskSpec(
        id=record.id,
        repo=record.root,
        prompt=record.message,
        branch=record.branch,
        tree=record.tree,
        base=record.base,
        setup=record.setup,
        max_steps=record.max_steps,
        keep_tree=True,  # until reviewed or discarded
        provider=record.provider,
        model=record.model,
        sandbox_network=record.sandbox_network,
        settings=record.settings,
    )


def _write_log(folder: Path, events: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)
    temporary = folder / ".log.jsonl.tmp"
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(folder / "log.jsonl")


def _append_log(folder: Path, event: dict[str, Any]) -> None:
    append_line(folder / "log.jsonl", json.dumps(event, ensure_ascii=False))


def _oldest_waiting(entry: records.Entry) -> bool:
    """Whether no task of this workspace that waits was started before this one."""
    for other in records.listing(Path(entry.record.root)):
        if other.record.id == entry.record.id:
            return True
        if other.status.status == "queued":
            return False
    return True


async def run(folder: Path) -> int:
    entry = records.load(folder)
    if entry is None:
        print(f"no background task in {folder}", file=sys.stderr)
        return 2
    status, record = entry.status, entry.record
    status.pid = os.getpid()
    entry.save()
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    loop.add_signal_handler(signal.SIGTERM, main.cancel)
    try:
        async with slots.slot(record.max_running, lambda: _oldest_waiting(entry)):
            status.status, status.started = "running", time.time()
            entry.save()

            def live(event: dict[str, Any]) -> None:
                if event.get("type") == "step" and event.get("state") == "started":
                    status.steps += 1
                    entry.save()
                _append_log(folder, event)

            task_run = BackgroundRun(spec_of(record), Path(record.root), live)
            # From here a cancel is the run's: it stops the loop and its commands, and
            # the task ends `cancelled` with what it did so far in its log.
            loop.add_signal_handler(signal.SIGTERM, task_run.cancel)
            outcome = await task_run.run()
    except asyncio.CancelledError:  # cancelled in the queue
        status.status, status.ended = "cancelled", time.time()
        entry.save()
        return 0
    status.status, status.ended = outcome.status, time.time()
    status.steps, status.tokens, status.cost = outcome.steps, outcome.tokens, outcome.cost
    status.error, status.commit = outcome.error, outcome.commit
    status.files = _files(outcome.patch)
    _write_log(folder, outcome.events)
    entry.save()
    return 0


def _files(patch: str) -> list[str]:
    """The paths a `git diff` names (`diff --git a/X b/X`), in order."""
    found = []
    for line in patch.splitlines():
        if line.startswith("diff --git a/"):
            found.append(line.removeprefix("diff --git a/").partition(" b/")[0])
    return found


def main() -> None:
    sys.exit(asyncio.run(run(Path(sys.argv[1]))))


if __name__ == "__main__":
    main()
