"""Carrying out a review: each file of the plan put to the user by a door (the editor's
`workspace/applyEdit`, the terminal's questions), recorded in the checkpoints as a task of
the user's session, so that Undo Last Task (`agent.undo`, `agentls undo`) takes back what
was accepted, and nothing else.

A file is declined, and the review goes on with the next, when the plan declined it (a link
on the way), when the walk from the root meets a link there now (one swapped in since the
plan: looked at again just before the file is sent to the editor or written), or when the
door could not land it (`NotLanded`). Each says why in its report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ..agent.conversation import Conversation
from ..history.checkpoints import checkpoints_for
from .review import FileReview, ReviewPlan, in_the_way


class NotLanded(Exception):
    """A file a door could not land once the user accepted it (the disk refused the write:
    a link swapped in on the way); the message says why. The review goes on."""


class Reviewer(Protocol):
    """How a door puts one file of the review to the user."""

    async def change(self, item: FileReview) -> tuple[int, str]:
        """Propose `item.change`; the hunks accepted, and why none was (empty if some).
        Raises NotLanded."""
        ...

    async def delete(self, item: FileReview) -> tuple[bool, str]:
        """Propose deleting the file; whether it was deleted, and why not. Raises NotLanded."""
        ...


async def carry_out(
    root: Path, plan: ReviewPlan, reviewer: Reviewer, conversation: Conversation, title: str
) -> list[dict[str, Any]]:
    """Put each file of `plan` to the user, as one checkpointed task; a report per file."""
    title = conversation.begin_task(title)
    checkpoints = checkpoints_for(root)
    if checkpoints is not None:
        await checkpoints.record(conversation.mark("task", None, title))
    reports = []
    try:
        for step, item in enumerate(plan.files, start=1):
            report = _report(item)
            reports.append(report)
            deleting = item.kind == "delete" and item.proposed and item.hunks > 0
            if item.change is None and not deleting:
                continue
            # The plan may be minutes old: a link swapped in since is met here, before the
            # editor (which would follow it) is sent anything.
            if reason := in_the_way(root, item.path):
                report["declined"], report["reason"] = True, reason
                continue
            if checkpoints is not None:
                # The step before waits for its record: files land back to back here.
                await checkpoints.settled()
                mark = conversation.mark("step", step, f"review: {item.path}", [item.path])
                await checkpoints.record(mark)
            try:
                if deleting:
                    deleted, report["reason"] = await reviewer.delete(item)
                    report["accepted"] = int(deleted)
                else:
                    report["accepted"], report["reason"] = await reviewer.change(item)
            except NotLanded as error:
                report["declined"], report["reason"] = True, str(error)
    finally:
        if checkpoints is not None:
            await checkpoints.record(conversation.mark("end", None, title))
    return reports


def _report(item: FileReview) -> dict[str, Any]:
    """What the review says of one file; `declined`: not landed for a reason of the disk (a
    link), which `reason` gives, as opposed to the user's no or a conflict."""
    return {
        "path": item.path,
        "kind": item.kind,
        "hunks": item.hunks,
        "accepted": 0,
        "conflicts": item.conflicts,
        "declined": bool(item.declined),
        "reason": item.declined,
    }
