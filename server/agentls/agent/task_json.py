"""A task's result as the protocol's camelCase JSON (docs/protocol.md): the answer of
`agent.runTask`, and of `agentls run --output-format json`. The loop itself never uses it."""

from __future__ import annotations

from typing import Any

from ..interfaces import Usage
from ..models.costs import Price, price_of
from .task_result import SubagentFigures, TaskResult


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


def subagent_json(
    subagent: SubagentFigures, prices: tuple[tuple[str, Price], ...]
) -> dict[str, Any]:
    """One subagent's figures: who it was, how it ended, its tokens and cost."""
    return {
        "id": subagent.id,
        "type": subagent.type,
        "description": subagent.description,
        "status": subagent.status,
        "steps": subagent.steps,
        **usage_json(subagent.usage, subagent.model, price_of(subagent.model, prices)),
    }


def task_json(
    result: TaskResult,
    outcome: str,
    model: str = "",
    price: Price | None = None,
    prices: tuple[tuple[str, Price], ...] = (),
) -> dict[str, Any]:
    """The answer of a task: how it ended, what it did and cost (its subagents' included,
    each one's own figures in `usage.subagents`), and its outcome in words (the line every
    door shows)."""
    usage = usage_json(result.usage, model, price)
    usage["costUsd"] = None if (cost := result.cost(price, prices)) is None else round(cost, 6)
    usage["subagents"] = [subagent_json(s, prices) for s in result.subagents]
    return {
        "status": result.status,
        "summary": result.summary,
        "steps": result.steps,
        "edits": {
            "applied": result.edits_applied,
            "rejected": result.edits_rejected,
            "partly": result.edits_partly,
        },
        "usage": usage,
        "outcome": outcome,
    }
