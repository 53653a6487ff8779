"""A task's result as the protocol's camelCase JSON (docs/protocol.md): the answer of
`agent.runTask`, and of `agentls run --output-format json`. The loop itself never uses it."""

from __future__ import annotations

from typing import Any

from ..interfaces import Usage
from ..models.costs import Price
from .task_result import TaskResult


def usage_json(usage: Usage, model: str = "", price: Price | None = None) -> dict[str, Any]:
    """A task's usage for the editor: the API's counts, how much of the prompt came from the
    cache, and the estimated cost in dollars (None when the model has no price)."""
    return {
        "inputTokens": usage.input,
        "outputTokens": usage.output,
        "cacheReadTokens": usage.cache_read,
        "cacheWriteTokens": usage.cache_write,
        "cacheHitRate": round(usage.cache_hit_rate, 4),
        "model": model,
        "costUsd": None if price is None else round(price.cost(usage), 6),
    }


def task_json(
    result: TaskResult, outcome: str, model: str = "", price: Price | None = None
) -> dict[str, Any]:
    """The answer of a task: how it ended, what it did and cost, and its outcome in words
    (the line every door shows)."""
    return {
        "status": result.status,
        "summary": result.summary,
        "steps": result.steps,
        "edits": {
            "applied": result.edits_applied,
            "rejected": result.edits_rejected,
            "partly": result.edits_partly,
        },
        "usage": usage_json(result.usage, model, price),
        "outcome": outcome,
    }
