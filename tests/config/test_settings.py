"""Settings: typed, defaulted, and a bad value never takes the server down."""

from __future__ import annotations

from agentls.config.settings import Settings, parse


def test_defaults() -> None:
    settings, problems = parse(None)
    assert settings == Settings() and problems == []
    assert (
        settings.max_steps,
        settings.approve_commands,
        settings.bash_timeout,
        settings.output_limit,
    ) == (50, "ask", 120.0, 30000)


def test_camel_case_values() -> None:
    settings, problems = parse(
        {
            "model": "claude-x",
            "maxSteps": 7,
            "maxTokens": 1000,
            "approveCommands": "always",
            "allowedCommands": ["git status"],
            "bashTimeout": 5,
            "outputLimit": 2000,
        }
    )
    assert problems == []
    assert settings == Settings(
        model="claude-x",
        max_steps=7,
        max_tokens=1000,
        approve_commands="always",
        allowed_commands=("git status",),
        bash_timeout=5.0,
        output_limit=2000,
    )


def test_bad_values_fall_back_to_defaults_with_a_message() -> None:
    settings, problems = parse(
        {
            "maxSteps": 0,
            "bashTimeout": 601,
            "approveCommands": "never",
            "allowedCommands": "ls",
            "outputLimit": True,
            "colour": 1,
        }
    )
    assert settings == Settings()
    assert len(problems) == 6
    assert (
        "agentls.bashTimeout: expected seconds, more than 0 and at most 600; "
        "using the default 120.0" in problems
    )
    assert "unknown setting agentls.colour is ignored" in problems


def test_not_an_object() -> None:
    settings, problems = parse(["nope"])
    assert settings == Settings() and problems


def test_plan_tool_is_a_flag() -> None:
    assert parse({"planTool": False})[0].plan_tool is False
    settings, problems = parse({"planTool": "no"})
    assert settings.plan_tool is True
    assert problems == ["agentls.planTool: expected true or false; using the default True"]


def test_models_is_a_list_of_model_ids_each_once() -> None:
    settings, problems = parse({"models": [" claude-opus-4-5 ", "gpt-5", "gpt-5"]})
    assert (settings.models, problems) == (("claude-opus-4-5", "gpt-5"), [])
    for wrong in ("gpt-5", ["gpt-5", ""], [3]):
        settings, problems = parse({"models": wrong})
        assert settings.models == ()
        assert problems and problems[0].startswith("agentls.models: expected a list")
