"""Which documents may feed a completion prompt, and the secrets every prompt is redacted of.

A document feeds one only when it is a file inside a workspace folder (by its path as given
and by the file it really is, so a link inside that points outside does not count) and is not
secret: not a `.env` or `.env.*` file (by its name or the file a link leads to), nor a path
the permission rules keep from reading (the deny and ask rules on reading, as a search leaves
them out), nor a file in a hidden folder of the home directory (`~/.ssh`, `~/.aws`,
`~/.config`, ...) unless the workspace folder itself lies in that hidden folder: a workspace
opened at `~` does not send its credentials to the model. Anything else gets no completion,
calls no model, and is remembered nowhere (no edit history).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from ..config import environment, project_settings
from ..permissions.decide import unreadable
from ..permissions.rules import Rules
from ..permissions.settings import project_rules

T = TypeVar("T")


def is_secret_name(path: Path) -> bool:
    return path.name == ".env" or path.name.startswith(".env.")


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def folder_of(path: Path, folders: Iterable[Path]) -> Path | None:
    """The workspace folder holding `path` as named and as resolved (None: outside all)."""
    if not path.is_absolute():
        return None
    named = os.path.normpath(path)
    real = os.path.realpath(path)
    for folder in folders:
        if _inside(named, os.path.normpath(folder)) and _inside(real, os.path.realpath(folder)):
            return folder
    return None


def in_home_dot_folder(path: Path, root: Path) -> bool:
    """Whether `path` (as the file it really is) lies in a hidden folder of the home
    directory that the workspace folder `root` is not itself inside."""
    home = os.path.realpath(Path.home())
    real = os.path.realpath(path)
    if not _inside(real, home) or real == home:
        return False
    top = os.path.relpath(real, home).split(os.sep)[0]
    return top.startswith(".") and not _inside(os.path.realpath(root), os.path.join(home, top))


def stamp(*paths: Path) -> tuple[int, ...]:
    """What changes when any of the files changes (or appears, or goes)."""
    stamp: list[int] = []
    for path in paths:
        try:
            status = os.stat(path)
        except OSError:
            stamp += [-1, -1, -1]
        else:
            stamp += [status.st_ino, status.st_mtime_ns, status.st_size]
    return tuple(stamp)


class Privacy:
    """The decisions, with each folder's rules file and `.env` files read again only when
    they change (a request per keystroke must not parse them each time)."""

    def __init__(self) -> None:
        self._read: dict[tuple[str, Path], tuple[tuple[int, ...], Any]] = {}

    def _cached(self, name: str, root: Path, files: tuple[Path, ...], read: Callable[[], T]) -> T:
        """`read()`, again only once one of `files` changed."""
        now = stamp(*files)
        cached = self._read.get((name, root))
        if cached is None or cached[0] != now:
            cached = self._read[(name, root)] = (now, read())
        value: T = cached[1]
        return value

    def project_rules(self, root: Path) -> Rules:
        files = (root / project_settings.SETTINGS_FILE,)
        return self._cached(
            "rules", root, files, lambda: project_rules(project_settings.load(root).permissions)[0]
        )

    def secrets(self, root: Path) -> tuple[str, ...]:
        """Every secret agentls knows of in this folder: the environment's, the user's
        config `.env`'s and the folder's `.env`'s."""
        files = (environment.config_dir() / ".env", root / ".env")
        return self._cached("secrets", root, files, lambda: environment.load(root).secrets)

    def may_feed(self, path: Path | None, folders: Iterable[Path], rules: Rules) -> Path | None:
        """The workspace folder of a document that may feed a prompt; None for any other."""
        if path is None:
            return None
        root = folder_of(path, folders)
        if root is None:
            return None
        # Named and as the file it really is: a link named `config.py` may be `.env.local`
        # (a rule's match follows links already).
        if is_secret_name(path) or is_secret_name(Path(os.path.realpath(path))):
            return None
        if in_home_dot_folder(path, root):
            return None
        guarded = unreadable(rules + self.project_rules(root))
        if any(rule.matches("read_file", {"path": str(path)}, root, "deny") for rule in guarded):
            return None
        return root
