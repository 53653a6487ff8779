"""The user's own settings file, for the front ends that no editor configures (the terminal,
ACP): `$XDG_CONFIG_HOME/agentls/settings.json`, the same object an editor sends."""

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
    raw: dict[str, Any] = {}
    problems: list[str] = []
    path = settings_path()
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            problems.append(f"{path} cannot be read ({error}); using the defaults")
        else:
            if isinstance(loaded, dict):
                raw.update(loaded)
            else:
                problems.append(f"{path} must hold a settings object; using the defaults")
    raw.update({k: v for k, v in overrides.items() if v is not None})
    settings, invalid = parse(raw)
    return settings, problems + invalid
