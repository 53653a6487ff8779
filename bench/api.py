"""The fake APIs of the test suite (tests/fake_api/), shared by the benchmarks."""

from __future__ import annotations

# `python -m bench` runs from the repository root, where tests/ is a namespace package.
from tests.fake_api import (
    FakeAnthropic,
    Recorded,
    Turn,
    compute_input_usage,
    reply,
    text,
    tool_use,
)
from tests.fake_api.chat import FakeOpenAI

__all__ = [
    "FakeAnthropic",
    "FakeOpenAI",
    "Recorded",
    "Turn",
    "compute_input_usage",
    "first_prompt_tokens",
    "reply",
    "seconds_per_step",
    "text",
    "tool_use",
]


def first_prompt_tokens(requests: list[Recorded]) -> int:
    """Input tokens of the first request, whether cached or not."""
    return compute_input_usage(requests[0].body, ())[0].total


def seconds_per_step(requests: list[Recorded]) -> float:
    """Client time per model turn, first to last request as the fake saw them."""
    return (requests[-1].received - requests[0].received) / (len(requests) - 1)
