"""The agentls settings object: typed, defaulted, and forgiving of bad values."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from .costs import Price

DEFAULT_MODEL = "claude-sonnet-5-5"
"""A current Claude Sonnet id, as listed by the anthropic SDK's ModelParam."""


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    max_steps: int = 50
    max_tokens: int = 16000
    approve_commands: Literal["ask", "always"] = "ask"
    allowed_commands: tuple[str, ...] = ()
    bash_timeout: float = 120.0
    output_limit: int = 30000
    request_timeout: float = 120.0
    context_window: int = 200_000
    context_budget: float = 0.7
    prices: tuple[tuple[str, Price], ...] = ()
    plan_tool: bool = True


def _int_in(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"expected a whole number from {low} to {high}")
        return value

    return check


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 600:
        raise ValueError("expected seconds, more than 0 and at most 600")
    return float(value)


def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.1 <= value <= 0.95:
        raise ValueError("expected a share of the context window from 0.1 to 0.95")
    return float(value)


def _prices(value: Any) -> tuple[tuple[str, Price], ...]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        raise ValueError('expected {"model-id-prefix": {"input": 3, "output": 15}, ...}')
    return tuple((prefix, Price.parse(spec)) for prefix, spec in value.items())


def _model(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value.strip() if value else None
    raise ValueError("expected a model id such as " + DEFAULT_MODEL)


def _approve(value: Any) -> str:
    if value not in ("ask", "always"):
        raise ValueError('expected "ask" or "always"')
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _prefixes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("expected a list of command prefixes")
    return tuple(v.strip() for v in value)


_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "model": ("model", _model),
    "maxSteps": ("max_steps", _int_in(1, 1000)),
    "maxTokens": ("max_tokens", _int_in(1, 128000)),
    "approveCommands": ("approve_commands", _approve),
    "allowedCommands": ("allowed_commands", _prefixes),
    "bashTimeout": ("bash_timeout", _seconds),
    "outputLimit": ("output_limit", _int_in(1000, 1_000_000)),
    "requestTimeout": ("request_timeout", _seconds),
    "contextWindow": ("context_window", _int_in(8_000, 2_000_000)),
    "contextBudget": ("context_budget", _share),
    "prices": ("prices", _prices),
    "planTool": ("plan_tool", _flag),
}


_CLIENT_ONLY = {"trace", "server"}
"""Settings of the editor clients under the same section (`agentls.trace.server`, the
server command), none of the server's business."""


def checked(key: str, value: Any) -> Any:
    """`value` for the setting `key`, as the settings object would take it; raises ValueError."""
    return _FIELDS[key][1](value)


def parse(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from the client's object; each bad value is reported and left at its default."""
    settings = Settings()
    if raw is None:
        return settings, []
    if not isinstance(raw, Mapping):
        return settings, ["agentls settings must be an object; using the defaults"]
    problems = []
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _CLIENT_ONLY:
            continue
        if key not in _FIELDS:
            problems.append(f"unknown setting agentls.{key} is ignored")
            continue
        name = _FIELDS[key][0]
        try:
            values[name] = checked(key, value)
        except ValueError as error:
            default = getattr(settings, name)
            problems.append(f"agentls.{key}: {error}; using the default {default!r}")
    return replace(settings, **values), problems
