"""Pricing a task's usage, and cutting a conversation down to its context budget."""

from __future__ import annotations

from typing import Any

import pytest
from agentls.agent.context import KEEP_CHARS, ContextBudget, prompt_chars
from agentls.agent.task_json import usage_json as report
from agentls.interfaces import Usage
from agentls.models.costs import Price, describe, price_of
from agentls.settings.assembly import parse


def test_prices_match_the_longest_prefix_and_settings_come_first() -> None:
    assert price_of("claude-opus-4-20250514") == Price(15, 75, 18.75, 1.5)
    assert price_of("claude-opus-4-5-20251101") == Price(5, 25, 6.25, 0.5)
    assert price_of("claude-sonnet-5-5") == Price(2, 10, 2.5, 0.1)
    assert price_of("my-proxy-model") is None
    mine = Price(1, 2, 3, 4)
    assert price_of("claude-sonnet-5-5", [("claude-sonnet", mine)]) == mine
    assert price_of("claude-haiku-4-5", [("claude-sonnet", mine)]) == Price(1, 5, 1.25, 0.1)


def test_price_settings_derive_cache_rates_and_reject_nonsense() -> None:
    settings, problems = parse({"prices": {"local-": {"input": 2, "output": 8}}})
    assert problems == [] and settings.prices == (("local-", Price(2, 8, 2.5, 0.2)),)
    _, problems = parse({"prices": {"local-": {"input": -1, "output": 8}}})
    assert len(problems) == 1 and "agentls.prices" in problems[0]
    _, problems = parse({"prices": {"local-": {"input": 1, "output": 2, "batch": 1}}})
    assert len(problems) == 1


def test_report_and_describe_price_the_usage() -> None:
    usage = Usage(input=1000, output=500, cache_read=8000, cache_write=1000)
    price = Price(3, 15, 3.75, 0.3)
    cost = (1000 * 3 + 500 * 15 + 1000 * 3.75 + 8000 * 0.3) / 1e6
    assert report(usage, "m", price) == {
        "inputTokens": 1000,
        "outputTokens": 500,
        "cacheReadTokens": 8000,
        "cacheWriteTokens": 1000,
        "cacheHitRate": 0.8,
        "model": "m",
        "costUsd": round(cost, 6),
    }
    assert report(Usage(), "m", None)["costUsd"] is None
    assert describe(usage, price) == f"10.5k tokens (80 % cached) · ${cost:.4f}"
    assert describe(usage, None) == "10.5k tokens (80 % cached)"


def _read(call_id: str, path: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": path}}
        ],
    }


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}],
    }


def _conversation(steps: int, size: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    for step in range(steps):
        messages += [_read(f"t{step}", f"f{step}.py"), _result(f"t{step}", str(step) * size)]
    return messages


def test_fit_elides_the_oldest_results_first_and_keeps_the_newest_exchange() -> None:
    messages = _conversation(10, 4000)
    budget = ContextBudget(tokens_per_char=0.25)
    chars = prompt_chars("system", [], messages)
    removed = budget.fit(messages, chars, limit=5000)
    assert budget.estimate(chars - removed) <= 5000 * 0.6
    results = [m["content"][0]["content"] for m in messages[2::2]]
    elided = [r.startswith("[elided") for r in results]
    assert elided == sorted(elided, reverse=True) and elided[0] and not elided[-1]
    assert "4,000 characters of this read_file result were dropped" in results[0]
    assert results[-1] == "9" * 4000
    assert prompt_chars("system", [], messages) == chars - removed


def test_fit_leaves_a_conversation_within_budget_alone() -> None:
    messages = _conversation(3, 1000)
    before = [dict(m) for m in messages]
    assert ContextBudget(0.25).fit(messages, prompt_chars("", [], messages), 10_000) == 0
    assert messages == before


def test_fit_shortens_long_inputs_of_old_edits_but_not_short_ones() -> None:
    write = {
        "type": "tool_use",
        "id": "w",
        "name": "write_file",
        "input": {"path": "a.py", "content": "x" * 9000},
    }
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [write]},
        _result("w", "ok"),
        _read("r", "b.py"),
        _result("r", "y" * 50),
    ]
    removed = ContextBudget(0.25).fit(messages, prompt_chars("", [], messages), 1000)
    assert messages[1]["content"][0]["input"] == {
        "path": "a.py",
        "content": "[elided: 9,000 characters]",
    }
    assert write["input"]["content"] == "x" * 9000  # the original block is not mutated
    assert messages[2]["content"][0]["content"] == "ok" and removed > 8900
    assert len(messages[4]["content"][0]["content"]) < KEEP_CHARS


def test_the_rate_follows_what_the_api_measured() -> None:
    budget = ContextBudget()
    budget.observe(prompt_tokens=2500, chars=10_000)
    assert budget.estimate(40_000) == 10_000
    budget.observe(prompt_tokens=0, chars=10_000)
    assert budget.tokens_per_char == 0.25


@pytest.mark.parametrize("share", [0.05, 1.0, "most", True])
def test_context_budget_setting_is_a_sane_share(share: Any) -> None:
    settings, problems = parse({"contextBudget": share})
    assert settings.context_budget == 0.7 and len(problems) == 1
