"""The engine's pure parts: the setting, the route a model string names, and the prompt's
window around the cursor with secrets redacted."""

from __future__ import annotations

import pytest
from agentls.cli import main
from agentls.completions.route import route, split_model
from agentls.completions.settings import CompletionSettings, parse
from agentls.completions.window import window
from agentls.interfaces import ModelError
from agentls.settings.assembly import parse as parse_settings


def test_the_setting_defaults_and_bounds() -> None:
    assert parse({}) == CompletionSettings()
    assert parse({"enabled": True, "debounceMs": 0, "maxTokens": 2048}).debounce_ms == 0
    for bad in ({"debounceMs": 2001}, {"maxTokens": 0}, {"enabled": "yes"}, {"other": 1}):
        with pytest.raises(ValueError):
            parse(bad)
    settings, problems = parse_settings({"completions": {"maxTokens": 9999}})
    assert settings.completions == CompletionSettings()
    assert problems and "completions" in problems[0]


def test_check_settings_reports_a_bad_completions_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check-settings", '{"completions": {"debounceMs": 5000}}']) == 1
    assert "debounceMs: expected a whole number from 0 to 2000" in capsys.readouterr().out


def test_a_model_string_names_its_profile_only_by_a_known_prefix() -> None:
    assert split_model("ollama/qwen2.5-coder:1.5b") == ("ollama", "qwen2.5-coder:1.5b")
    assert split_model("qwen/qwen2.5-coder-7b") == (None, "qwen/qwen2.5-coder-7b")
    assert split_model("openrouter/qwen/qwen2.5-coder-7b") == (
        "openrouter",
        "qwen/qwen2.5-coder-7b",
    )
    assert split_model(None) == (None, None)


def test_deepseek_fim_goes_to_its_beta_api_with_a_bearer_key() -> None:
    options = CompletionSettings(enabled=True, model="deepseek/deepseek-chat")
    found = route(options, None, None, None, {"DEEPSEEK_API_KEY": "sk-deep-0123456789"})
    assert found.fim == "openai"
    assert found.fim_url == "https://api.deepseek.com/beta/completions"
    assert found.headers(fim=True)["authorization"] == "Bearer sk-deep-0123456789"
    # Its chat route is the Anthropic-format endpoint, with the key as that API takes it.
    assert found.chat_url == "https://api.deepseek.com/anthropic/v1/messages"
    assert found.headers(fim=False)["x-api-key"] == "sk-deep-0123456789"


def test_the_key_is_the_profiles_own_and_a_missing_one_is_an_error() -> None:
    options = CompletionSettings(enabled=True, model="openrouter/qwen/qwen-coder")
    with pytest.raises(ModelError):
        route(options, None, None, None, {"ANTHROPIC_API_KEY": "sk-ant-0123456789"})
    local = route(CompletionSettings(model="ollama/m"), None, None, None, {})
    assert local.fim_url == "http://localhost:11434/api/generate"
    assert "authorization" not in local.headers(fim=True)


def test_without_a_prefix_the_agents_provider_and_model_are_used() -> None:
    env = {"OPENAI_API_KEY": "sk-open-0123456789"}
    found = route(CompletionSettings(), "openai", "http://gw.local/v1", "gpt-agent", env)
    assert found.model == "gpt-agent"
    assert found.fim_url == "http://gw.local/v1/completions"
    assert found.chat_url == "http://gw.local/v1/chat/completions"


def test_the_window_is_cut_at_the_cursor_and_bounded() -> None:
    text = "a" * 50 + "|" + "b" * 50
    cut = window(text, 51, (), before=10, after=5)
    assert cut is not None and (cut.prefix, cut.suffix) == ("a" * 9 + "|", "b" * 5)


def test_no_piece_of_a_secret_is_left_at_a_far_cut_or_around_the_cursor() -> None:
    secret = "s3cret-value-0123456789"
    text = f"x = '{secret}'\n" + "y = 1\n" * 3 + "z = " + f"'{secret}'"
    cursor = text.index("z = ") + 4
    # The far cut falls inside the first secret: none of it is sent.
    cut = window(text, cursor, (secret,), before=cursor - 10, after=100)
    assert cut is not None
    assert not any(secret[i : i + 6] in cut.prefix for i in range(len(secret) - 6))
    assert cut.suffix == "'[redacted]'"
    inside = text.index(secret, cursor) + 5
    assert window(text, inside, (secret,)) is None
