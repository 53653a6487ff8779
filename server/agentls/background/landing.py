"""Carrying out a review: each file of the plan put to the user by a door (the editor's
`workspace/applyEdit`, the terminal's questions), recorded in the checkpoints as a task of
the user's session, so that Undo Last Task (`agent.undo`, `agentls undo`) takes back what
was accepted, and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ..agent.conversation import Conversation
from ..history.checkpoints import checkpoints_for
from .review import FileReview, ReviewPlan


class Reviewer(Protocol):
    """How a door puts one file of the review to the user."""

    async def change(self, item: FileReview) -> tuple[int, str]:
        """Propose `item.change`; the hunks accepted, and why none was (empty if some)."""
        ...

    async def delete(self, item: FileReview) -> tuple[bool, str]:
        """Propose deleting the file; whether it was deleted, and why not."""
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
            report: dict[str, Any] = {
                "path": item.path,
                "kind": item.kind,
                "hunks": item.hunks,
                "accepted": 0,
                "conflicts": item.conflicts,
                "reason": "",
            }
            reports.append(report)
            deleting = item.kind == "delete" and item.proposed and item.hunks > 0
            if item.change is None and not deleting:
                continue
            if checkpoints is not None:
                # The step before waits for its record: files land back to back here.
                await checkpoints.settled()
                mark = conversation.mark("step", step, f"review: {item.path}", [item.path])
                await checkpoints.record(mark)
            if deleting:
                deleted, report["reason"] = await reviewer.delete(item)
                report["accepted"] = int(deleted)
            else:
                report["accepted"], report["reason"] = await reviewer.change(item)
    finally:
        if checkpoints is not None:
            await checkpoints.record(conversation.mark("end", None, title))
    return reports
