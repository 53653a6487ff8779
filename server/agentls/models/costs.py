"""What a task's tokens cost: a small price table by model id, overridable in the settings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..interfaces import Usage


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    @classmethod
    def parse(cls, spec: Any) -> Price:
        """A price from settings: input and output required; unless given, the cache rates
        follow the API's usual multipliers (writes 1.25 times, reads 0.1 times the input)."""
        keys = ("input", "output", "cacheWrite", "cacheRead")
        if not isinstance(spec, Mapping) or set(spec) - set(keys):
            raise ValueError("a price is {input, output, cacheWrite?, cacheRead?} in $ per MTok")
        rates: dict[str, float] = {}
        for key in keys:
            rate = spec.get(key)
            if rate is None and key.startswith("cache"):
                continue
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate < 0:
                raise ValueError(f"price {key} must be dollars per million tokens, 0 or more")
            rates[key] = float(rate)
        base = rates["input"]
        return cls(
            base,
            rates["output"],
            rates.get("cacheWrite", base * 1.25),
            rates.get("cacheRead", base * 0.1),
        )

    def cost(self, usage: Usage) -> float:
        return (
            usage.input * self.input
            + usage.output * self.output
            + usage.cache_write * self.cache_write
            + usage.cache_read * self.cache_read
        ) / 1_000_000


PRICES: tuple[tuple[str, Price], ...] = (
    # Anthropic's published list prices (5-minute cache writes), as of 2026-11.
    ("claude-fable-5-1", Price(10, 50, 12.5, 0.25)),
    ("claude-mythos-5-1", Price(10, 50, 12.5, 0.25)),
    ("claude-fable-5", Price(10, 50, 12.5, 1)),
    ("claude-mythos-5", Price(10, 50, 12.5, 1)),
    ("claude-opus-5-5", Price(4, 20, 5, 0.2)),
    ("claude-opus-5", Price(5, 25, 6.25, 0.5)),
    ("claude-opus-4-5", Price(5, 25, 6.25, 0.5)),
    ("claude-opus-4-6", Price(5, 25, 6.25, 0.5)),
    ("claude-opus-4-7", Price(5, 25, 6.25, 0.5)),
    ("claude-opus-4-8", Price(5, 25, 6.25, 0.5)),
    ("claude-opus-4", Price(15, 75, 18.75, 1.5)),
    ("claude-sonnet-5-5", Price(2, 10, 2.5, 0.1)),
    ("claude-sonnet-5", Price(2, 10, 2.5, 0.2)),
    ("claude-sonnet-4", Price(3, 15, 3.75, 0.3)),
    ("claude-3-7-sonnet", Price(3, 15, 3.75, 0.3)),
    ("claude-haiku-5-5", Price(0.1, 0.5, 0.125, 0.01)),
    ("claude-haiku-4-5", Price(1, 5, 1.25, 0.1)),
    ("claude-3-5-haiku", Price(0.8, 4, 1, 0.08)),
    ("claude-3-haiku", Price(0.25, 1.25, 0.3, 0.03)),
    # OpenAI's published list prices (cached input; writing the cache costs nothing extra).
    ("gpt-4o", Price(2.5, 10, 2.5, 1.25)),
    ("gpt-4o-mini", Price(0.15, 0.6, 0.15, 0.075)),
    ("gpt-4.1", Price(2, 8, 2, 0.5)),
    ("gpt-4.1-mini", Price(0.4, 1.6, 0.4, 0.1)),
    ("gpt-4.1-nano", Price(0.1, 0.4, 0.1, 0.025)),
    ("gpt-5", Price(1.25, 10, 1.25, 0.125)),
    ("gpt-5-mini", Price(0.25, 2, 0.25, 0.025)),
    ("gpt-5-nano", Price(0.05, 0.4, 0.05, 0.005)),
    ("o3", Price(2, 8, 2, 0.5)),
    ("o4-mini", Price(1.1, 4.4, 1.1, 0.275)),
    # DeepSeek's (V3.2, both modes): cache hits a tenth of a miss.
    ("deepseek-chat", Price(0.28, 0.42, 0.28, 0.028)),
    ("deepseek-reasoner", Price(0.28, 0.42, 0.28, 0.028)),
)


def price_of(model: str, overrides: Iterable[tuple[str, Price]] = ()) -> Price | None:
    """The price of the longest matching model-id prefix, the settings' before the table's;
    None for a model nobody priced (a cost is never guessed).

    A prefix of the table names a model with its dated or sized variants (`gpt-4o-2024-08-06`,
    `deepseek-chat:latest`), never a later version (`gpt-5` is not `gpt-5.2`)."""
    mine = [(prefix, price) for prefix, price in overrides if model.startswith(prefix)]
    table = [(prefix, price) for prefix, price in PRICES if _variant(model, prefix)]
    for matches in (mine, table):
        if matches:
            return max(matches, key=lambda match: len(match[0]))[1]
    return None


def _variant(model: str, prefix: str) -> bool:
    return model.startswith(prefix) and model[len(prefix) : len(prefix) + 1] in ("", "-", ":")


def describe(usage: Usage, price: Price | None, cost: float | None = None) -> str:
    """The tokens of a task in a few words: `4.9k tokens (65 % cached) · $0.0055`; `cost`
    when it is known otherwise (models of several prices), else at `price`."""
    tokens = usage.prompt + usage.output
    line = f"{count(tokens)} {'token' if tokens == 1 else 'tokens'}"
    if usage.prompt:
        line += f" ({round(usage.cache_hit_rate * 100)} % cached)"
    if cost is None and price is not None:
        cost = price.cost(usage)
    return line if cost is None else f"{line} · ${cost:.4f}"


def count(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
