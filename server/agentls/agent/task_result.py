"""How a task ended: the status, the model's last words, and what it did and cost. Each door
puts it into its own words and wire shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..interfaces import Usage
from ..models.costs import Price, price_of

Status = Literal["done", "cancelled", "failed", "step_limit", "token_limit"]
"""`token_limit`: only a subagent's (`subagents.maxTokens`)."""

CANCELLED_BY_USER = "Cancelled by the user."


@dataclass
class SubagentFigures:
    """What one subagent did and cost (its own subagents' share included)."""

    id: str
    type: str
    description: str
    status: Status
    steps: int
    usage: Usage
    model: str


@dataclass
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
