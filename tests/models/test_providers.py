"""Provider profiles: the endpoint a task talks to, its key, and what a missing one says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentls import redaction
from agentls.cli import main
from agentls.interfaces import ModelError
from agentls.models import providers
from agentls.models.anthropic import AnthropicModel, ClientCache
from agentls.models.costs import price_of
from agentls.settings.assembly import Settings, parse
from agentls.wiring import prepare_task
from fake_api import FakeAnthropic

HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_the_default_is_anthropic_with_its_key_and_the_sdks_base_url_variable() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "http://gateway"}
    endpoint = providers.endpoint(None, None, env)
    assert (endpoint.profile.name, endpoint.base_url, endpoint.key, endpoint.auth) == (
        "anthropic",
        "http://gateway",
        "sk-a",
        "x-api-key",
    )
    token = providers.endpoint(None, None, {"ANTHROPIC_AUTH_TOKEN": "tok"})
    assert (token.key, token.auth, token.base_url) == ("tok", "bearer", "https://api.anthropic.com")


def test_agentls_provider_chooses_when_the_setting_is_absent() -> None:
    env = {"AGENTLS_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://o/v1"}
    endpoint = providers.endpoint(None, None, env)
    assert (endpoint.profile.wire, endpoint.base_url, endpoint.key) == (
        "openai",
        "http://o/v1",
        "sk-o",
    )
    # The setting beats the variable, and baseUrl beats the SDK's variable.
    setting = providers.endpoint("anthropic", "http://mine", {**env, "ANTHROPIC_API_KEY": "sk-a"})
    assert (setting.profile.name, setting.base_url, setting.key) == (
        "anthropic",
        "http://mine",
        "sk-a",
    )


@pytest.mark.parametrize(
    ("name", "wire", "url"),
    [
        ("ollama", "anthropic", "http://localhost:11434"),
        ("llamacpp", "anthropic", "http://localhost:8080"),
        ("vllm", "anthropic", "http://localhost:8000"),
        ("lmstudio", "openai", "http://localhost:1234/v1"),
    ],
)
def test_local_servers_need_no_key_and_get_none_of_the_users(
    name: str, wire: str, url: str
) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_BASE_URL": "http://x"}
    endpoint = providers.endpoint(name, None, env)
    assert (endpoint.profile.wire, endpoint.base_url, endpoint.key) == (wire, url, None)


@pytest.mark.parametrize(
    ("name", "variable", "auth"),
    [("deepseek", "DEEPSEEK_API_KEY", "x-api-key"), ("openrouter", "OPENROUTER_API_KEY", "bearer")],
)
def test_hosted_profiles_read_their_own_key_only(name: str, variable: str, auth: str) -> None:
    # The Anthropic key and base URL are never sent to another provider.
    others = {"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "http://evil"}
    with pytest.raises(ModelError, match="API key is set") as caught:
        providers.endpoint(name, None, others)
    assert variable in caught.value.hint
    endpoint = providers.endpoint(name, None, {**others, variable: "sk-p"})
    assert (endpoint.key, endpoint.auth) == ("sk-p", auth)
    assert endpoint.base_url == providers.PROFILES[name].base_url


def test_an_unknown_provider_names_the_choices() -> None:
    with pytest.raises(ModelError, match="Unknown provider 'gemini'") as caught:
        providers.endpoint(None, None, {"AGENTLS_PROVIDER": "gemini"})
    assert "ollama" in caught.value.hint


def test_settings_check_provider_and_base_url() -> None:
    settings, problems = parse({"provider": "ollama", "baseUrl": "http://box:11434/"})
    assert (settings.provider, settings.base_url, problems) == ("ollama", "http://box:11434", [])
    settings, problems = parse({"provider": "gemini", "baseUrl": "box:1", "contextWindow": None})
    assert (settings.provider, settings.base_url, settings.context_window) == (None, None, None)
    assert len(problems) == 2 and "ollama" in problems[0] and "http://" in problems[1]


@pytest.mark.parametrize(
    "name", sorted({v for profile in providers.PROFILES.values() for v, _ in profile.keys})
)
def test_every_providers_key_is_a_secret(name: str) -> None:
    env = {name: "sk-0123456789abcdef", "PATH": "/bin"}
    assert redaction.scrubbed(env) == {"PATH": "/bin"}
    assert redaction.secret_values(env) == ("sk-0123456789abcdef",)


def test_a_provider_other_than_anthropic_needs_a_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("AGENTLS_MODEL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    with pytest.raises(ModelError, match="No model is set for the Ollama provider") as caught:
        prepare_task(tmp_path, Settings(provider="ollama"), ClientCache())
    assert "agentls.model" in caught.value.hint


def test_the_context_window_defaults_by_model_then_by_wire_format(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")

    def window(settings: Settings) -> int | None:
        return prepare_task(tmp_path, settings, ClientCache()).settings.context_window

    assert window(Settings(provider="openai", model="gpt-4o-2024-08-06")) == 128_000
    assert window(Settings(provider="openai", model="gpt-4.1-mini")) == 1_047_576
    assert window(Settings(provider="lmstudio", model="qwen3-coder")) == 128_000
    assert window(Settings(provider="ollama", model="qwen3-coder")) == 200_000
    assert window(Settings(provider="openai", model="gpt-4o", context_window=64_000)) == 64_000


def test_common_models_are_priced_and_an_unknown_one_is_not_guessed() -> None:
    assert price_of("gpt-4o-mini") is not None and price_of("gpt-4o-mini") != price_of("gpt-4o")
    assert price_of("deepseek-chat") is not None
    assert price_of("gpt-5.2") is None  # not gpt-5's price by its prefix
    assert price_of("qwen3-coder:30b") is None


def test_run_takes_a_provider_and_refuses_an_unknown_one(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--provider", "gemini", "task"])
    assert "expected one of anthropic, openai" in capsys.readouterr().err


async def test_a_local_profile_sends_no_cache_markers_and_none_of_the_users_keys(
    fake: FakeAnthropic,
) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-users-own-key"}
    endpoint = providers.endpoint("ollama", fake.url, env)
    model = AnthropicModel(ClientCache().get(endpoint), "qwen3", 100, endpoint, env, 30.0)
    fake.script("hi")
    await model.respond("system", HELLO, [], lambda piece: None)
    (request,) = fake.requests
    assert "cache_control" not in json.dumps(request.body)
    assert "sk-ant-users-own-key" not in json.dumps(request.headers)


async def test_a_bearer_profile_sends_its_key_as_a_bearer_token(fake: FakeAnthropic) -> None:
    env = {"OPENROUTER_API_KEY": "sk-or-0123456789", "ANTHROPIC_API_KEY": "sk-ant-users-own-key"}
    endpoint = providers.endpoint("openrouter", fake.url, env)
    model = AnthropicModel(
        ClientCache().get(endpoint), "anthropic/claude", 100, endpoint, env, 30.0
    )
    fake.script("hi")
    await model.respond("system", HELLO, [], lambda piece: None)
    (request,) = fake.requests
    assert request.headers["authorization"] == "Bearer sk-or-0123456789"
    assert "sk-ant-users-own-key" not in json.dumps(request.headers)


def test_a_workspace_env_file_chooses_no_provider_endpoint_or_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under environment.load's rules: the repository's .env configures nothing, and the
    endpoint the shell exports wins over the provider's own, wherever the key lies."""
    for name in ("AGENTLS_PROVIDER", "AGENTLS_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config"
    (config / "agentls").mkdir(parents=True)
    (config / "agentls" / ".env").write_text("OPENAI_API_KEY=sk-users-own-key-123\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://set-without-a-key.example/v1")
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".env").write_text(
        "AGENTLS_PROVIDER=deepseek\nDEEPSEEK_API_KEY=sk-repo-123456\n"
        "OPENAI_BASE_URL=http://evil.example/v1\nAGENTLS_MODEL=evil\n"
    )
    setup = prepare_task(root, Settings(provider="openai", model="gpt-4o"), ClientCache())
    endpoint = setup.model.endpoint
    assert (endpoint.profile.name, endpoint.key) == ("openai", "sk-users-own-key-123")
    assert endpoint.base_url == "http://set-without-a-key.example/v1"
    with pytest.raises(ModelError, match="No model is set"):
        prepare_task(root, Settings(provider="ollama"), ClientCache())


def test_check_model_says_where_tasks_go_without_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-0123456789")
    monkeypatch.delenv("AGENTLS_MODEL", raising=False)
    assert main(["check-model", '{"provider": "openrouter", "model": "x/y"}']) == 0
    out = capsys.readouterr().out
    assert out == (
        "x/y on OpenRouter at https://openrouter.ai/api (anthropic format), "
        "key from OPENROUTER_API_KEY\n"
    )
    assert main(["check-model", '{"provider": "openrouter"}']) == 1
    assert "No model is set for the OpenRouter provider" in capsys.readouterr().out


def test_the_key_hint_names_the_users_own_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    hint = providers.PROFILES["deepseek"].key_hint
    assert (
        f"DEEPSEEK_API_KEY in the environment or in {tmp_path / 'conf' / 'agentls' / '.env'}"
        in hint
    )


@pytest.mark.parametrize(
    ("name", "url", "keyless"),
    [
        ("openai", "http://127.0.0.1:8080/v1", True),
        ("anthropic", "http://localhost:8080", True),
        ("openrouter", "http://[::1]:4000/api", True),
        ("deepseek", "http://127.3.2.1:9", True),
        ("openai", "http://10.0.0.5:8080/v1", False),
        ("anthropic", "http://127.0.0.1.example.com", False),
        ("openai", "http://localhost.example.com:8080/v1", False),
    ],
)
def test_a_server_on_loopback_needs_no_key(name: str, url: str, keyless: bool) -> None:
    # llama.cpp's server on 127.0.0.1 through the openai profile: the user need not invent one.
    if keyless:
        endpoint = providers.endpoint(name, url, {})
        assert (endpoint.key, endpoint.auth, endpoint.base_url) == (None, "none", url)
    else:
        with pytest.raises(ModelError, match="API key is set"):
            providers.endpoint(name, url, {})
