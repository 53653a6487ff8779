"""The user's own settings file, `$XDG_CONFIG_HOME/agentls/settings.json`, the same object an
editor sends: the whole configuration of the doors no editor configures (the terminal, ACP),
and under the editor's own settings in the LSP door (the editor's win, key by key). Read here;
parsed into `Settings` by `agentls/settings/user.py`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .environment import config_dir


def settings_path() -> Path:
    return config_dir() / "settings.json"


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
