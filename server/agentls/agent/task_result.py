"""How a task ended: the status, the model's last words, and what it did and cost. Each door
puts it into its own words and wire shape."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..interfaces import ModelError, Usage
from ..models.costs import Price, price_of

if TYPE_CHECKING:
    from ..tools.base import EditTally

log = logging.getLogger(__name__)

Status = Literal["done", "cancelled", "failed", "step_limit", "token_limit"]
"""`token_limit`: only a subagent's (`subagents.maxTokens`)."""

CANCELLED_BY_USER = "Cancelled by the user."


class Ended(Exception):
    """A way out of the agent loop, raised where the task ends: how it ended, and the words
    the user is given (`hint`: what to do about a failure)."""

    status: Status = "failed"

    def __init__(self, summary: str, hint: str = "") -> None:
        super().__init__(summary)
        self.summary, self.hint = summary, hint

    def result(
        self, steps: int, edits: EditTally, usage: Usage, subagents: list[SubagentFigures]
    ) -> TaskResult:
        """The task's result, ended this way after `steps`, with `edits` and `usage`."""
        return TaskResult(
            status=self.status,
            summary=self.summary,
            steps=steps,
            edits_applied=edits.applied,
            edits_rejected=edits.rejected,
            usage=usage,
            error_hint=self.hint,
            edits_partly=edits.partly,
            refused=isinstance(self, Declined),
            subagents=list(subagents),
        )


class Answered(Ended):
    """The model answered with no call: its text ends the task."""

    status = "done"


class Declined(Ended):
    """The model refused the task (`stop_reason` refusal)."""

    def __init__(self) -> None:
        super().__init__("The model declined this task (refusal).")


class Stopped(Ended):
    """The task stopped short: cancelled by the user, the model unreachable, a defect."""

    def __init__(self, summary: str, hint: str = "", *, status: Status = "failed") -> None:
        super().__init__(summary, hint)
        self.status = status


def stopped(error: asyncio.CancelledError | Exception) -> tuple[Stopped, str]:
    """The end of a task the loop did not choose (a cancel, the model, a defect of ours, which
    must not leave the session unusable), and what the conversation is told of it."""
    if isinstance(error, asyncio.CancelledError):
        why = "The user cancelled this task; do not go on with it unless asked."
        return Stopped(CANCELLED_BY_USER, status="cancelled"), why
    if isinstance(error, ModelError):
        return Stopped(str(error), error.hint), f"This task stopped: {error}"
    log.error("the agent loop failed", exc_info=error)
    failed = Stopped(
        f"agentls failed: {type(error).__name__}: {error}",
        "See the agentls log; the conversation can go on.",
    )
    return failed, f"This task stopped: agentls failed ({type(error).__name__})."


class LimitReached(Ended):
    """A budget, the agent's own or one above it, is spent: steps or tokens."""

    def __init__(self, summary: str, tokens: bool) -> None:
        super().__init__(summary)
        self.status = "token_limit" if tokens else "step_limit"


@dataclass(kw_only=True)
class SubagentFigures:
    """What one subagent did and cost (its own subagents' share included)."""

    id: str
    type: str
    description: str
    status: Status
    steps: int
    usage: Usage
    model: str


@dataclass(kw_only=True)
class TaskResult:
    status: Status
    summary: str
    steps: int = 0
    edits_applied: int = 0
    edits_rejected: int = 0
    usage: Usage = field(default_factory=Usage)
    error_hint: str = ""
    edits_partly: int = 0
    refused: bool = False
    """The model declined the task (a front end that has a word for it says so: ACP)."""
    subagents: list[SubagentFigures] = field(default_factory=list)
    """The subagents the task started, in the order they ended; `usage` includes theirs."""
    last_turn: Usage = field(default_factory=Usage)
    """The task's own last model request: its prompt and reply are what the context holds
    now (a meter of the context, not of the bill)."""

    def subagents_usage(self) -> Usage:
        total = Usage()
        for subagent in self.subagents:
            total.add(subagent.usage)
        return total

    def cost(self, price: Price | None, prices: tuple[tuple[str, Price], ...] = ()) -> float | None:
        """Dollars: the task's own tokens at its model's `price`, each subagent's at its own
        model's (`prices`: the settings' overrides); None when any of them has no price."""
        if price is None:
            return None
        theirs = self.subagents_usage()
        own = Usage(
            self.usage.input - theirs.input,
            self.usage.output - theirs.output,
            self.usage.cache_read - theirs.cache_read,
            self.usage.cache_write - theirs.cache_write,
        )
        total = price.cost(own)
        for subagent in self.subagents:
            priced = price_of(subagent.model, prices) if subagent.model else price
            if priced is None:
                return None
            total += priced.cost(subagent.usage)
        return total
