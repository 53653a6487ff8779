"""`Settings`: every part's settings in one typed, defaulted object, and the table that reads
it from a settings object (an editor's, the user's file), forgiving of bad values.

A part adds its settings by writing its rows and their dataclass in its own module and naming
that dataclass once, below. The settings are listed in that order everywhere they are shown
(VS Code's settings, docs/settings.md, the vimdoc)."""

from __future__ import annotations

from dataclasses import dataclass

from ..completions.settings import CompletionsPart
from ..config.settings import Part, Table
from ..extensions.settings import ExtensionSettings
from ..eyes.settings import EyesSettings
from ..models.settings import ModelSettings
from ..permissions.settings import PermissionSettings
from ..shell.settings import ShellSettings
from ..web.settings import WebSettings
from .task import BackgroundSettings, LoopSettings


@dataclass(frozen=True, kw_only=True)
class Settings(
    ModelSettings,
    LoopSettings,
    PermissionSettings,
    ShellSettings,
    ExtensionSettings,
    EyesSettings,
    WebSettings,
    BackgroundSettings,
    CompletionsPart,
):
    """The settings of every part, each under its own attribute names."""


TABLE = Table(
    Settings,
    (row for part in Settings.__bases__ if issubclass(part, Part) for row in part.ROWS),
)
SETTINGS = TABLE.rows
USER_ONLY = TABLE.user_only
"""What only the user sets: taken from the user's settings file or the editor's user
settings, never from a folder's settings nor from a client that could be anyone's."""

parse = TABLE.parse
checked = TABLE.checked
flattened = TABLE.flattened
with_user_only = TABLE.with_user_only
