"""The background tasks from the terminal: `agentls run --background TASK` (prints the
task's id and returns), `agentls tasks` (a table), `agentls tasks review ID` (each hunk
asked about, y/n, then written), `agentls tasks cancel ID`, `agentls tasks discard ID`,
`agentls tasks log ID` (its transcript).

The settings are the user's own file's (`~/.config/agentls/settings.json`), as for every
terminal task; a review here is a task of the checkpoints, which `agentls undo` takes back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agent.conversation import Conversation
from ..background import control, records, review
from ..background.control import BackgroundError, Options
from ..background.landing import NotLanded, carry_out
from ..background.transcript import transcript
from ..disk import files
from ..disk.landing import land_on_disk
from ..edits import apply_hunks, lines_with_ends
from ..settings.user import load as load_user_settings
from ..tasktree.worktree import TreeError
from ..visible import visible

Ask = Callable[[str], str]


def user_options(**overrides: Any) -> Options:
    """The options of the user's own settings file, with the command line's `overrides`."""
    settings, problems = load_user_settings(**overrides)
    for problem in problems:
        print(f"agentls: {problem}", file=sys.stderr)
    return Options.of(settings)


def start(task: str, provider: str | None, model: str | None, max_steps: int | None) -> int:
    options = user_options(provider=provider, model=model, maxSteps=max_steps)
    root = Path.cwd()
    try:
        control.clean(root, options.keep_days)
        entry = control.start(root, task, task, options)
    except (BackgroundError, OSError) as error:
        print(f"agentls: {error}", file=sys.stderr)
        return 1
    print(entry.record.id)
    print(
        f"agentls: running in the background on {entry.record.branch}; "
        f"`agentls tasks` lists it, `agentls tasks review {entry.record.id}` reviews it",
        file=sys.stderr,
    )
    return 0


def _age(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    seconds = max(time.time() - stamp, 0)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def table() -> int:
    root = Path.cwd()
    control.clean(root, user_options().keep_days)
    entries = records.listing(root.resolve())
    if not entries:
        print("No background tasks in this folder (start one: agentls run --background TASK).")
        return 0
    rows: list[tuple[str, ...]] = [("ID", "STATUS", "STEPS", "TOKENS", "COST", "STARTED", "TASK")]
    for entry in entries:
        status = entry.status
        state = status.status + (" (reviewed)" if status.reviewed else "")
        cost = "-" if status.cost is None else f"${status.cost:.4f}"
        started = _age(status.started or entry.record.created)
        steps, tokens = str(status.steps), str(status.tokens)
        rows.append((entry.record.id, state, steps, tokens, cost, started, entry.record.title))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:6])) + "  " + row[6])
    return 0


def cancel(task_id: str) -> int:
    try:
        entry = control.cancel(Path.cwd(), task_id)
    except BackgroundError as error:
        print(f"agentls: {error}", file=sys.stderr)
        return 1
    print(f"{task_id}: {'cancelling' if entry.status.status in records.ACTIVE else 'ended'}")
    return 0


def log(task_id: str) -> int:
    entry = records.find(Path.cwd().resolve(), task_id)
    if entry is None:
        print(
            f"agentls: no background task {task_id} here (agentls tasks lists them)",
            file=sys.stderr,
        )
        return 1
    sys.stdout.write(transcript(entry))
    return 0


def discard(task_id: str) -> int:
    try:
        control.discard(Path.cwd(), task_id)
    except BackgroundError as error:
        print(f"agentls: {error}", file=sys.stderr)
        return 1
    print(f"{task_id}: discarded (its worktree and branch removed)")
    return 0


class TerminalReviewer:
    """Each hunk shown as a diff and asked about; what is accepted is written here."""

    def __init__(self, root: Path, ask: Ask, everything: bool) -> None:
        self.root, self.ask, self.everything = root, ask, everything

    def _yes(self, question: str) -> bool:
        if self.everything:
            return True
        try:
            answer = self.ask(f"{question} [y/n] ")
        except EOFError:  # no more answers (stdin closed): what is not accepted is not done
            return False
        return answer.strip().lower() in ("y", "yes")

    async def change(self, item: review.FileReview) -> tuple[int, str]:
        change = item.change
        assert change is not None
        old = change.old_text or ""
        kept = []
        for number, hunk in enumerate(change.hunks, 1):
            # The branch's names and lines are the model's: escapes are shown, not obeyed.
            print(f"\n{_shown(item.path)}: hunk {number} of {len(change.hunks)}: {hunk.describe()}")
            for line in lines_with_ends(old[hunk.start : hunk.end]):
                print("-" + visible(line), end="" if line.endswith("\n") else "\n")
            for line in lines_with_ends(hunk.text):
                print("+" + visible(line), end="" if line.endswith("\n") else "\n")
            if self._yes("Apply this hunk?"):
                kept.append(hunk)
        if not kept:
            return 0, "rejected"
        # Written walking from the root without following a link, and only if the file is
        # still what was shown (the questions may have taken minutes).
        accepted = dataclasses.replace(change, new_text=apply_hunks(old, kept), hunks=kept)
        landed = land_on_disk(self.root, accepted)
        if not landed.applied:
            raise NotLanded(landed.rejected_reason or "it could not be written")
        return len(kept), ""

    async def delete(self, item: review.FileReview) -> tuple[bool, str]:
        if not self._yes(f"\nDelete {_shown(item.path)}, as the task did?"):
            return False, "rejected"
        try:
            files.remove(self.root, self.root / item.path)
        except files.PathChanged as error:
            raise NotLanded(f"not deleted: {error.reason}") from None
        except (OSError, ValueError) as error:
            raise NotLanded(f"not deleted: {error}") from None
        return True, ""


def _shown(text: str) -> str:
    """A path or reason from the task's branch, on one line, its control characters escaped."""
    return visible(text, lines=False)


def review_in_terminal(task_id: str, everything: bool, ask: Ask = input) -> int:
    root = Path.cwd().resolve()
    try:
        entry = control.found(root, task_id)
    except BackgroundError as error:
        print(f"agentls: {error}", file=sys.stderr)
        return 1
    if entry.status.status in records.ACTIVE or entry.status.commit is None:
        state = entry.status.status
        print(f"agentls: task {task_id} is {state}: nothing to review yet", file=sys.stderr)
        return 1
    record = entry.record
    try:
        plan = review.plan(root, record.base, entry.status.commit, {}, f"background task {task_id}")
    except TreeError as error:
        print(f"agentls: {error}", file=sys.stderr)
        return 1
    title = f"review of background task {task_id}: {record.title}"
    reviewer = TerminalReviewer(root, ask, everything)
    reports = asyncio.run(carry_out(root, plan, reviewer, Conversation(), title))
    entry.status.reviewed = True
    entry.save()
    control.remove_tree(entry)
    return _summary(reports, plan.binary, record.branch)


def _summary(reports: list[dict[str, Any]], binary: list[str], branch: str) -> int:
    """Say what the review did; 1 when part of the change was left on the branch for a reason
    other than the user's no (a conflict, a link in the way), as `agentls undo` does."""
    print()
    for report in reports:
        path = _shown(report["path"])
        if report["declined"]:
            print(f"{path}: not applied: {_shown(report['reason'])}")
            continue
        print(f"{path}: {report['accepted']} of {report['hunks']} accepted")
        for conflict in report["conflicts"]:
            print(f"  not applied (conflict): {_shown(conflict)}")
    for path in binary:
        print(f"{_shown(path)}: binary, not reviewed here (it is on the branch {branch})")
    left = [_shown(r["path"]) for r in reports if r["declined"] or r["conflicts"]]
    if left:
        print(f"Left on the branch {branch}: {', '.join(left)} (git diff HEAD {branch}).")
    print("agentls undo takes the review back.")
    return 1 if left else 0
