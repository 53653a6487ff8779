"""Settings: typed, defaulted, and a bad value never takes the server down."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from agentls.config.settings import Part, Setting, Table, boolean
from agentls.settings.assembly import SETTINGS, Settings, parse


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


def test_the_background_settings_are_a_group_and_the_old_flat_names_still_read() -> None:
    """Issue 38: `"background": {"setup": ...}` was an unknown setting, nothing run."""
    group = {"background": {"setup": "npm ci", "maxRunning": 5, "keepDays": 2}}
    settings, problems = parse(group)
    assert problems == []
    assert (settings.background_setup, settings.background_max_running) == ("npm ci", 5)
    assert settings.background_keep_days == 2
    assert parse({"background.setup": "npm ci"})[0] == parse({"background": {"setup": "npm ci"}})[0]
    flat, notes = parse({"backgroundSetup": "uv sync", "backgroundKeepDays": 9})
    assert (flat.background_setup, flat.background_keep_days) == ("uv sync", 9)
    assert notes == [
        'agentls.backgroundSetup is deprecated: write it as setup in the background group (`"'
        'background": {"setup": ...}`, or agentls.background.setup); it is still read',
        "agentls.backgroundKeepDays is deprecated: write it as keepDays in the background "
        'group (`"background": {"keepDays": ...}`, or agentls.background.keepDays); it is '
        "still read",
    ]
    both, (note,) = parse({"backgroundSetup": "old", "background": {"setup": "new"}})
    assert both.background_setup == "new" and note.endswith("is also set and is used")
    bad, (problem,) = parse({"background": {"maxRunning": 0}})
    assert bad.background_max_running == 3 and problem.startswith("agentls.background.maxRunning")


def test_models_is_a_list_of_model_ids_each_once() -> None:
    settings, problems = parse({"models": [" claude-opus-4-5 ", "gpt-5", "gpt-5"]})
    assert (settings.models, problems) == (("claude-opus-4-5", "gpt-5"), [])
    for wrong in ("gpt-5", ["gpt-5", ""], [3]):
        settings, problems = parse({"models": wrong})
        assert settings.models == ()
        assert problems and problems[0].startswith("agentls.models: expected a list")


def test_a_part_whose_fields_and_rows_differ_is_refused_when_assembled() -> None:
    """A field without its row (or a row without its field) would be a setting nobody can
    set, or one that sets nothing: the table refuses it when the settings are assembled."""

    @dataclass(frozen=True, kw_only=True)
    class Lacking(Part):
        ROWS: ClassVar[tuple[Setting, ...]] = (boolean("known", "known", False, "Known."),)

        known: bool = False
        unknown: int = 0

    with pytest.raises(ValueError, match=r"each field of Lacking needs one row: \['unknown'\]"):
        Table(Lacking, Lacking.ROWS)
    assert Table(Settings, SETTINGS).parse({"sandboxNetwork": True})[0].sandbox_network
