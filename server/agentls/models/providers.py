"""Which server a task's model runs on: provider profiles, and the one place a key and its
endpoint are chosen.

Two wire formats cover every provider: the Anthropic Messages API (Anthropic itself, and
Ollama, llama.cpp's server, vLLM, DeepSeek and OpenRouter, which accept it too) and OpenAI
Chat Completions (OpenAI, LM Studio, and any other compatible server). A profile names a
format, a default endpoint, where the key comes from and how it is sent, and what the
provider lacks.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from ..config.environment import config_dir, origin
from ..interfaces import ModelError

Wire = Literal["anthropic", "openai"]
Auth = Literal["x-api-key", "bearer", "none"]
Asking = Literal["llamacpp", "ollama"]


@dataclass(frozen=True, kw_only=True)
class Profile:
    name: str
    title: str
    wire: Wire
    base_url: str
    keys: tuple[tuple[str, Auth], ...]
    """The environment variables that may hold the key, first found wins, each with how its
    key is sent; none for a local server."""
    base_url_variable: str | None = None
    """The SDK's own variable for the endpoint, honoured for the plain wire-format profiles."""
    cache_markers: bool = True
    """Anthropic format: mark prompt-cache breakpoints (a server without caching may refuse
    or mis-bill them)."""
    max_tokens_field: str = "max_tokens"
    """OpenAI format: the name of the output limit (OpenAI's own API wants the newer one)."""
    vision: bool = True
    """Whether its models take images, unless the `vision` setting says: a local server's
    model is often text only, and DeepSeek's API takes no image."""
    web_search: bool = False
    """Whether it runs Anthropic's `web_search` server tool (the `webSearch` setting): only
    Anthropic's own API does; a local server or another provider speaking its format would
    refuse the tool, or ignore it while the model believes it searched."""

    @property
    def no_web_search(self) -> str:
        """What the user is told when `webSearch` is on and this provider has no search."""
        return (
            f"webSearch is on, but {self.title} has no web search of its own (Anthropic's "
            "web_search server tool runs on Anthropic's API only): the model is not offered "
            "one. web_fetch still reads pages."
        )

    capabilities: Asking | None = None
    """How the server can be asked what its model supports (`capabilities.py`), if at all."""

    @property
    def key_hint(self) -> str:
        names = " or ".join(variable for variable, _ in self.keys)
        return (
            f"Set {names} in the environment or in {config_dir() / '.env'} (a workspace's .env "
            "belongs to the repository and never configures the model client)."
        )


PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(
            name="anthropic",
            title="Anthropic",
            wire="anthropic",
            base_url="https://api.anthropic.com",
            keys=(("ANTHROPIC_API_KEY", "x-api-key"), ("ANTHROPIC_AUTH_TOKEN", "bearer")),
            base_url_variable="ANTHROPIC_BASE_URL",
            web_search=True,
        ),
        Profile(
            name="openai",
            title="OpenAI",
            wire="openai",
            base_url="https://api.openai.com/v1",
            keys=(("OPENAI_API_KEY", "bearer"),),
            base_url_variable="OPENAI_BASE_URL",
            max_tokens_field="max_completion_tokens",
        ),
        Profile(
            name="ollama",
            title="Ollama",
            wire="anthropic",
            base_url="http://localhost:11434",
            keys=(),
            cache_markers=False,
            vision=False,
            capabilities="ollama",
        ),
        Profile(
            name="llamacpp",
            title="llama.cpp",
            wire="anthropic",
            base_url="http://localhost:8080",
            keys=(),
            cache_markers=False,
            vision=False,
            capabilities="llamacpp",
        ),
        Profile(
            name="vllm",
            title="vLLM",
            wire="anthropic",
            base_url="http://localhost:8000",
            keys=(),
            cache_markers=False,
            vision=False,
        ),
        Profile(
            name="lmstudio",
            title="LM Studio",
            wire="openai",
            base_url="http://localhost:1234/v1",
            keys=(),
            vision=False,
        ),
        Profile(
            name="deepseek",
            title="DeepSeek",
            wire="anthropic",
            base_url="https://api.deepseek.com/anthropic",
            keys=(("DEEPSEEK_API_KEY", "x-api-key"),),
            vision=False,
        ),
        Profile(
            name="openrouter",
            title="OpenRouter",
            wire="anthropic",
            base_url="https://openrouter.ai/api",
            keys=(("OPENROUTER_API_KEY", "bearer"),),
        ),
    )
}

DEFAULT_PROVIDER = "anthropic"
DEFAULT_MODEL = "claude-sonnet-5-5"
"""A current Claude Sonnet id, as listed by the anthropic SDK's ModelParam."""

KEYLESS = "agentls-no-key"
"""Sent to a local server that wants no key: both SDKs refuse to send a request without one."""


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """Where a task's requests go and the key they carry: chosen together, never apart."""

    profile: Profile
    base_url: str
    key: str | None
    auth: Auth
    url_source: str = "the agentls.baseUrl setting"
    """Where `base_url` came from, for a message that says what to correct."""
    key_variable: str | None = None
    """Where the key came from (never the key itself, for messages)."""

    @property
    def shown_url(self) -> str:
        """The base URL without any user name or password in it, for messages and logs."""
        return shown_url(self.base_url)

    @property
    def signature(self) -> tuple[str, str, str | None, Auth]:
        """What makes two endpoints the same for a reused SDK client."""
        return (self.profile.wire, self.base_url, self.key, self.auth)


def shown_url(url: str) -> str:
    """`url` without any user name or password in it, for messages and logs."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def model_id(profile: Profile, model: str | None, env: Mapping[str, str]) -> str:
    """The model for `profile`: the setting, else AGENTLS_MODEL, else (for Anthropic only)
    a current Sonnet; raises ModelError naming the setting for any other provider."""
    name = model or env.get("AGENTLS_MODEL")
    if name:
        return name
    if profile.name != DEFAULT_PROVIDER:
        raise ModelError(
            f"No model is set for the {profile.title} provider.",
            "Set the agentls.model setting (or AGENTLS_MODEL, or --model in the terminal) "
            "to one of the models it serves.",
        )
    return DEFAULT_MODEL


def describe(endpoint: Endpoint, model: str) -> str:
    """One line for a health check: the model, where it runs, where its key comes from."""
    profile = endpoint.profile
    key = f"key from {endpoint.key_variable}" if endpoint.key_variable else "no key"
    url = endpoint.shown_url
    if endpoint.url_source == profile.base_url_variable:  # which source won says what to edit
        url += f" ({endpoint.url_source} from {origin(endpoint.url_source)})"
    return f"{model} on {profile.title} at {url} ({profile.wire} format), {key}"


def profile_of(provider: str | None, env: Mapping[str, str]) -> Profile:
    """The profile the setting `provider` (None when unset) names, else AGENTLS_PROVIDER,
    else Anthropic; raises ModelError for an unknown name."""
    name = provider or env.get("AGENTLS_PROVIDER") or DEFAULT_PROVIDER
    profile = PROFILES.get(name)
    if profile is None:
        raise ModelError(
            f"Unknown provider {name!r}.",
            f"Set agentls.provider (or AGENTLS_PROVIDER) to one of: {', '.join(PROFILES)}.",
        )
    return profile


def endpoint(provider: str | None, base_url: str | None, env: Mapping[str, str]) -> Endpoint:
    """The profile, endpoint and key for the settings `provider` and `baseUrl` (None when
    unset) and the merged environment `env`.

    This is the only place a provider's key or URL is read. A profile's key never goes to
    another provider's default host: a named profile reads its own variable only, and the
    SDKs' base-URL variables count for the plain `anthropic` and `openai` profiles alone.
    No key is demanded for a server on the loopback address (a local model's).
    Raises ModelError for an unknown provider or a missing key.
    """
    profile = profile_of(provider, env)
    from_variable = env.get(profile.base_url_variable) if profile.base_url_variable else None
    url, source = (
        (base_url, "the agentls.baseUrl setting")
        if base_url
        else (from_variable, str(profile.base_url_variable))
        if from_variable
        else (profile.base_url, f"the {profile.name} profile")
    )
    if "://" not in url:
        raise ModelError(
            f"{source} ({url}) has no scheme.",
            f"Write it with one, e.g. http://{url} or https://{url}.",
        )
    for variable, auth in profile.keys:
        if env.get(variable):
            return Endpoint(
                profile=profile,
                base_url=url,
                key=env[variable],
                auth=auth,
                url_source=source,
                key_variable=variable,
            )
    if profile.keys and not on_loopback(url):  # a server on this machine may want none
        raise ModelError(f"No {profile.title} API key is set.", profile.key_hint)
    return Endpoint(profile=profile, base_url=url, key=None, auth="none", url_source=source)


def on_loopback(url: str) -> bool:
    """Whether `url`'s host is this machine's loopback (`localhost`, 127.0.0.0/8, ::1): a
    server no one else can reach, such as a local model's, which wants no key."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):  # RFC 6761: always loopback
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    # The providers' published context windows, by model-id prefix.
    ("claude-", 200_000),
    ("gpt-4o", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
)

FALLBACK_WINDOWS: dict[Wire, int] = {"anthropic": 200_000, "openai": 128_000}
"""For a model not in the table: the Messages API's usual window, and a common one for the
rest (a local server's may be smaller: set agentls.contextWindow)."""


def context_window(model: str, wire: Wire) -> int:
    """The context window of `model` when the settings do not say it."""
    matches = [(len(prefix), size) for prefix, size in CONTEXT_WINDOWS if model.startswith(prefix)]
    return max(matches)[1] if matches else FALLBACK_WINDOWS[wire]
