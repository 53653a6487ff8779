"""Where a completion request goes: the profile, the endpoint and its key, the model, and the
wire its fill-in-the-middle call speaks.

The key comes from `models.providers.endpoint`, the one place a key is chosen, over the
user's own sources only (the environment and the user's config `.env`, never a workspace's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..models.providers import PROFILES, Endpoint, endpoint, model_id
from .settings import CompletionSettings

Fim = Literal["openai", "llamacpp", "ollama", "none"]
"""The fill-in-the-middle route: OpenAI's `/completions` (prompt, suffix), llama.cpp's
`/infill`, Ollama's `/api/generate` with `suffix`; none for the Anthropic API."""

_FIM: dict[str, tuple[Fim, str]] = {
    # profile: (route, its path under the endpoint's base URL)
    "anthropic": ("none", ""),
    "openai": ("openai", "/completions"),
    "ollama": ("ollama", "/api/generate"),
    "llamacpp": ("llamacpp", "/infill"),
    "vllm": ("openai", "/v1/completions"),
    "lmstudio": ("openai", "/completions"),
    "deepseek": ("openai", "/completions"),
    "openrouter": ("openai", "/v1/completions"),
}

DEEPSEEK_FIM = "https://api.deepseek.com/beta"
"""DeepSeek's FIM is in its beta API (OpenAI's format, a bearer key), not beside the
Anthropic-format endpoint the agent uses."""


@dataclass(frozen=True)
class Route:
    endpoint: Endpoint
    """The endpoint and its key; its chat format is the profile's (`/v1/messages` or
    `/chat/completions`)."""
    model: str
    fim: Fim
    fim_url: str
    """Where the fill-in-the-middle request is posted."""

    @property
    def raw_url(self) -> str:
        """Where a raw prompt is completed (Zeta's next edit): the FIM route's server, at
        its plain completion (llama.cpp's `/completion`; Ollama's `/api/generate` with `raw`;
        OpenAI's `/completions` without a suffix)."""
        if self.fim == "llamacpp":
            return self.fim_url.removesuffix("/infill") + "/completion"
        return self.fim_url

    @property
    def chat_url(self) -> str:
        base = self.endpoint.base_url.rstrip("/")
        if self.endpoint.profile.wire == "anthropic":
            return f"{base}/v1/messages"
        return f"{base}/chat/completions"

    def headers(self, fim: bool) -> dict[str, str]:
        """The request's headers: the key as the profile sends it (DeepSeek's FIM, in
        OpenAI's format, takes it as a bearer token)."""
        key, auth = self.endpoint.key, self.endpoint.auth
        headers = {"content-type": "application/json"}
        if self.endpoint.profile.wire == "anthropic" and not fim:
            headers["anthropic-version"] = "2023-06-01"
        if key is None:
            return headers
        if auth == "x-api-key" and not fim:
            return {**headers, "x-api-key": key}
        return {**headers, "authorization": f"Bearer {key}"}


def split_model(model: str | None) -> tuple[str | None, str | None]:
    """`"ollama/qwen2.5-coder:1.5b"` as (profile, model); a string whose first part names no
    profile (`qwen/qwen2.5-coder` on OpenRouter) is a model on the agent's provider."""
    if model is None:
        return None, None
    prefix, slash, rest = model.partition("/")
    if slash and prefix in PROFILES and rest:
        return prefix, rest
    return None, model


def route(
    settings: CompletionSettings,
    agent_provider: str | None,
    agent_base_url: str | None,
    agent_model: str | None,
    env: Mapping[str, str],
) -> Route:
    """The route for these settings: `completions.baseUrl` is the server's URL for both
    routes, else a named profile's own endpoint, else the agent's. Raises ModelError (no
    key, an unknown provider)."""
    profile_name, model = split_model(settings.model)
    if profile_name is None:
        found = endpoint(agent_provider, settings.base_url or agent_base_url, env)
        model = model or agent_model
    else:
        found = endpoint(profile_name, settings.base_url, env)
    name = model_id(found.profile, model, env)
    fim, path = _FIM.get(found.profile.name, ("openai", "/completions"))
    base = found.base_url.rstrip("/")
    if found.profile.name == "deepseek" and found.url_source == "the deepseek profile":
        base = DEEPSEEK_FIM
    return Route(endpoint=found, model=name, fim=fim, fim_url=base + path)
