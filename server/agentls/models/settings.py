"""The model's settings: which provider and model, its endpoint, its limits, its prices and
what it may do (images, Anthropic's web search). Their rows and values are this part's own;
`agentls/settings/` assembles them with the others'."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..config.settings import (
    Part,
    Setting,
    boolean,
    in_seconds,
    int_in,
    optional,
    optional_flag,
    strings,
    whole,
)
from .costs import Price
from .providers import DEFAULT_MODEL, PROFILES


def _prices(value: Any) -> tuple[tuple[str, Price], ...]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        raise ValueError('expected {"model-id-prefix": {"input": 3, "output": 15}, ...}')
    return tuple((prefix, Price.parse(spec)) for prefix, spec in value.items())


def _model(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value.strip() if value else None
    raise ValueError("expected a model id such as " + DEFAULT_MODEL)


def _models(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f'expected a list of model ids such as ["{DEFAULT_MODEL}"]')
    return tuple(dict.fromkeys(v.strip() for v in value))


def _provider(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value in PROFILES):
        return None if value is None else str(value)
    raise ValueError(f"expected one of {', '.join(PROFILES)}")


def _base_url(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.startswith(("http://", "https://"))):
        return value.rstrip("/") if value else None
    raise ValueError("expected an http:// or https:// URL")


_USER_ONLY = " User settings only: a workspace never chooses where your key goes."
_BILLED = " User settings only: a workspace never chooses what you are billed for, nor its cost."

ROWS = (
    Setting(
        key="provider",
        field="provider",
        check=_provider,
        schema={"type": ["string", "null"], "enum": [None, *PROFILES]},
        default=None,
        description=(
            "Where the model runs: `anthropic` or `openai` (the wire format), or a named profile "
            "(the README's Models section). `null` (default): the server's environment variable "
            "`AGENTLS_PROVIDER`, else `anthropic`." + _USER_ONLY
        ),
        user_only=True,
    ),
    Setting(
        key="baseUrl",
        field="base_url",
        check=_base_url,
        schema={"type": ["string", "null"]},
        default=None,
        description=(
            "The provider's endpoint, e.g. `http://localhost:11434` for Ollama. `null` (default): "
            "the profile's (for `anthropic` and `openai`, `ANTHROPIC_BASE_URL` or "
            "`OPENAI_BASE_URL` first)." + _USER_ONLY
        ),
        user_only=True,
    ),
    Setting(
        key="model",
        field="model",
        check=_model,
        schema={"type": ["string", "null"]},
        default=None,
        description=(
            "Model id. `null` (default): the server's environment variable `AGENTLS_MODEL`, "
            f"else `{DEFAULT_MODEL}` for the `anthropic` provider; every other provider needs one."
            + _BILLED
        ),
        user_only=True,
    ),
    strings(
        "models",
        "models",
        _models,
        "More model ids to switch to in a session, beside `model`: an ACP client's "
        "model picker (Zed, VS Code's Agent Host, JetBrains) offers the model in use, then these."
        + _BILLED,
        user_only=True,
    ),
    whole(
        "maxTokens",
        "max_tokens",
        1,
        128000,
        16000,
        "Output tokens per model turn.",
    ),
    in_seconds(
        "requestTimeout",
        "request_timeout",
        120,
        "Seconds a model request may stay silent before it is abandoned and retried.",
    ),
    Setting(
        key="contextWindow",
        field="context_window",
        check=optional(int_in(8_000, 2_000_000)),
        schema={"type": ["integer", "null"], "minimum": 8000, "maximum": 2000000},
        default=None,
        description=(
            "The model's context window in tokens. `null` (default): the known model's (200000 "
            "for Claude), else 128000 for an OpenAI-format provider; set it for a local model "
            "served with a smaller one."
        ),
    ),
    Setting(
        key="prices",
        field="prices",
        check=_prices,
        schema={
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "input": {"type": "number"},
                    "output": {"type": "number"},
                    "cacheWrite": {"type": "number"},
                    "cacheRead": {"type": "number"},
                },
                "required": ["input", "output"],
            },
        },
        default={},
        description=(
            "Dollars per million tokens by model-id prefix, consulted before the built-in table, "
            'e.g. `{"claude-sonnet-5-5": {"input": 2, "output": 10}}`.' + _BILLED
        ),
        user_only=True,
    ),
    Setting(
        key="vision",
        field="vision",
        check=optional_flag,
        schema={"type": ["boolean", "null"]},
        default=None,
        description=(
            "Whether the model takes images (read_file of a PNG, JPEG, GIF or WebP; images you "
            "attach); `false` sends a one-line placeholder instead. `null` (default): the "
            "provider's profile says (true for `anthropic`, `openai` and `openrouter`)."
        ),
    ),
    boolean(
        "webSearch",
        "web_search",
        False,
        "Offer the model Anthropic's `web_search` server tool (billed per search by "
        "Anthropic); only Anthropic's own API (the `anthropic` provider) runs it: with another "
        "provider the tool is not sent and the start says so. User settings only.",
        user_only=True,
    ),
)


@dataclass(frozen=True, kw_only=True)
class ModelSettings(Part):
    ROWS: ClassVar[tuple[Setting, ...]] = ROWS

    provider: str | None = None
    """None: AGENTLS_PROVIDER, else anthropic (providers.endpoint)."""
    base_url: str | None = None
    model: str | None = None
    models: tuple[str, ...] = ()
    """More model ids offered beside `model` by a client's model picker (ACP)."""
    max_tokens: int = 16000
    request_timeout: float = 120.0
    context_window: int | None = None
    """None: the model's known window (providers.context_window)."""
    prices: tuple[tuple[str, Price], ...] = ()
    vision: bool | None = None
    """None: the provider profile's (providers.Profile.vision), resolved by prepare_task."""
    web_search: bool = False
