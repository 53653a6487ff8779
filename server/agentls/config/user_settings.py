"""The user's own settings file, `$XDG_CONFIG_HOME/agentls/settings.json`, the same object an
editor sends: the whole configuration of the doors no editor configures (the terminal, ACP),
and under the editor's own settings in the LSP door (the editor's win, key by key)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .environment import config_dir
from .settings import Settings, parse


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load(**overrides: Any) -> tuple[Settings, list[str]]:
    """The user's settings with `overrides` (camelCase names) on top, and what was wrong.

    Never the workspace's: a cloned repository must not configure the agent that reads it.
    """
    raw, problems = read()
    raw.update({k: v for k, v in overrides.items() if v is not None})
    settings, invalid = parse(raw)
    return settings, problems + invalid


def read() -> tuple[dict[str, Any], list[str]]:
    """The file's settings object as written (empty when there is none), and what was wrong
    with the file: for a door that puts the editor's settings on top (the LSP server)."""
    path = settings_path()
    if not path.is_file():
        return {}, []
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return {}, [f"{path} cannot be read ({error}); using the defaults"]
    if not isinstance(loaded, dict):
        return {}, [f"{path} must hold a settings object; using the defaults"]
    return loaded, []
