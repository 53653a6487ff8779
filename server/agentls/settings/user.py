"""The user's own settings (`config/user_settings.py` reads the file), as the `Settings` of
the doors no editor configures: the terminal, ACP, a batch's and a background task's."""

from __future__ import annotations

from typing import Any

from ..config.user_settings import read
from .assembly import Settings, parse


def load(**overrides: Any) -> tuple[Settings, list[str]]:
    """The user's settings with `overrides` (camelCase names) on top, and what was wrong.

    Never the workspace's: a cloned repository must not configure the agent that reads it.
    """
    raw, problems = read()
    raw.update({k: v for k, v in overrides.items() if v is not None})
    settings, invalid = parse(raw)
    return settings, problems + invalid
