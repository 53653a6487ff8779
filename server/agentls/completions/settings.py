"""The `completions` setting: inline completions' own model and pace (one object).
`agentls/settings/` assembles it with the other parts' settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config.settings import Part, Setting


@dataclass(frozen=True, kw_only=True)
class CompletionSettings:
    enabled: bool = False
    model: str | None = None
    """`"<profile>/<model>"` (`ollama/qwen2.5-coder:1.5b`), or a model id on the agent's own
    provider; None: the agent's model."""
    base_url: str | None = None
    """None: the profile's endpoint for its fill-in-the-middle route."""
    debounce_ms: int = 75
    max_tokens: int = 128
    next_edit: bool = True


DEFAULT: dict[str, Any] = {
    "enabled": False,
    "model": None,
    "baseUrl": None,
    "debounceMs": 75,
    "maxTokens": 128,
    "nextEdit": True,
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "enabled": {"type": "boolean"},
        "model": {"type": ["string", "null"]},
        "baseUrl": {"type": ["string", "null"]},
        "debounceMs": {"type": "integer", "minimum": 0, "maximum": 2000},
        "maxTokens": {"type": "integer", "minimum": 1, "maximum": 2048},
        "nextEdit": {"type": "boolean"},
    },
    "additionalProperties": False,
}


def _flag(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{key}: expected true or false")
    return value


def _whole(key: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{key}: expected a whole number from {low} to {high}")
    return value


def _text(key: str, value: Any, url: bool = False) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key}: expected a string, or null")
    if url and not value.startswith(("http://", "https://")):
        raise ValueError(f"{key}: expected an http:// or https:// URL")
    return value.strip().rstrip("/") if url else value.strip()


def parse(value: Any) -> CompletionSettings:
    """The setting from its JSON object (unset keys at their defaults); raises ValueError."""
    if not isinstance(value, Mapping) or set(value) - set(DEFAULT):
        raise ValueError(f"expected an object with {', '.join(DEFAULT)}")
    given = {**DEFAULT, **value}
    return CompletionSettings(
        enabled=_flag("enabled", given["enabled"]),
        model=_text("model", given["model"]),
        base_url=_text("baseUrl", given["baseUrl"], url=True),
        debounce_ms=_whole("debounceMs", given["debounceMs"], 0, 2000),
        max_tokens=_whole("maxTokens", given["maxTokens"], 1, 2048),
        next_edit=_flag("nextEdit", given["nextEdit"]),
    )


DESCRIPTION = (
    "Inline completions (`textDocument/inlineCompletion`) and next-edit suggestions: "
    "`enabled` (default `false`: nothing advertised, no model called), `model` "
    '(`"<profile>/<model>"`, e.g. `"ollama/qwen2.5-coder:1.5b"`; without a profile, a model on '
    "the agent's provider), `baseUrl`, `debounceMs` (75), `maxTokens` (128), `nextEdit` "
    "(`true`). See docs/completions.md. User settings only: a workspace never chooses what "
    "you are billed for, nor its cost."
)

ROWS = (
    Setting(
        key="completions",
        field="completions",
        check=parse,
        schema=SCHEMA,
        default=DEFAULT,
        description=DESCRIPTION,
        user_only=True,
    ),
)


@dataclass(frozen=True, kw_only=True)
class CompletionsPart(Part):
    ROWS: ClassVar[tuple[Setting, ...]] = ROWS

    completions: CompletionSettings = field(default_factory=CompletionSettings)
