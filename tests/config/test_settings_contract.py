"""The settings are defined once, each in its part's rows (`models/settings.py`, ...)
assembled in agentls.settings.assembly.SETTINGS; every other place that names them (VS Code's
contribution, the vimdoc, docs/settings.md, the protocol) is held to it here.

Adding a setting: one `Setting` row and its field in the part's settings, then what these
tests ask for (their messages show the expected text).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from agentls.config.settings import CLIENT_ONLY
from agentls.settings.assembly import SETTINGS, Settings, checked

REPO = Path(__file__).resolve().parents[2]
KEYS = [setting.key for setting in SETTINGS]


def test_every_field_is_a_setting_whose_json_default_is_its_default() -> None:
    names = [s.field for s in SETTINGS]
    assert sorted(field.name for field in dataclasses.fields(Settings)) == sorted(names)
    assert len(set(names)) == len(names) == len({s.key for s in SETTINGS})
    for setting in SETTINGS:
        assert checked(setting.key, setting.default) == getattr(Settings(), setting.field)


def contribution(setting_key: str) -> dict[str, object]:
    (setting,) = (s for s in SETTINGS if s.key == setting_key)
    scope = {"scope": "application"} if setting.user_only else {}
    return {
        **scope,
        **setting.schema,
        "default": setting.default,
        "markdownDescription": setting.description,
    }


def test_vscode_ignores_the_user_only_settings_of_an_untrusted_folder() -> None:
    package = json.loads((REPO / "editor-clients" / "vscode" / "package.json").read_text())
    restricted = package["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    assert set(restricted) == {"agentls.server.command"} | {
        f"agentls.{s.key}" for s in SETTINGS if s.user_only
    }


def test_vscode_contributes_each_setting_as_defined() -> None:
    package = json.loads((REPO / "editor-clients" / "vscode" / "package.json").read_text())
    properties = package["contributes"]["configuration"]["properties"]
    server_keys = [
        k.removeprefix("agentls.") for k in properties if k.split(".")[1] not in CLIENT_ONLY
    ]
    assert server_keys == KEYS
    for key in KEYS:
        expected = contribution(key)
        assert properties[f"agentls.{key}"] == expected, (
            f'package.json should have "agentls.{key}": {json.dumps(expected)}'
        )


def _section(text: str, start: str, end: str) -> str:
    begin = text.index(start) + len(start)
    return text[begin : text.index(end, begin)]


def test_the_settings_reference_has_one_heading_per_setting_in_order() -> None:
    reference = (REPO / "docs" / "settings.md").read_text()
    headings = re.findall(r"^## `([\w.]+)`$", reference, re.MULTILINE)
    assert headings == KEYS


def test_the_protocol_table_lists_every_setting_in_order() -> None:
    table = _section((REPO / "docs" / "protocol.md").read_text(), "| name |", "\n\n")
    assert re.findall(r"^\| `([\w.]+)` \|", table, re.MULTILINE) == KEYS


@pytest.mark.parametrize("key", KEYS)
def test_the_vimdoc_names_the_setting(key: str) -> None:
    vimdoc = (REPO / "editor-clients" / "nvim" / "doc" / "agentls.txt").read_text()
    listed = _section(vimdoc, "The same settings object", "It is sent")
    assert re.findall(r"`([\w.]+)`", listed) == KEYS, "the vimdoc lists the settings in order"
    assert f"`{key}`" in listed


def test_the_vscode_readme_lists_every_setting_with_its_default() -> None:
    readme = (REPO / "editor-clients" / "vscode" / "README.md").read_text()
    for setting in SETTINGS:
        row = f"| `agentls.{setting.key}` | `{json.dumps(setting.default)}` |"
        assert row in readme, f"editor-clients/vscode/README.md's settings table needs {row} ..."
