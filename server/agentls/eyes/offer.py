"""Whether `definition` and `references` are offered outside the LSP door: a found server
that may answer them, whose program exists, serves a file the workspace has. Otherwise the
tools are not offered, and the task's first request is what it is without servers."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from ..extensions.mcp_config import expand
from ..shell import launch
from .definitions import ServerDefinition

MAX_ENTRIES = 5000
"""Entries of the workspace looked at, breadth first, for a file some server serves: the
look costs each task's start, so a file deep in a huge tree may go unseen."""
_SKIPPED = frozenset(("node_modules", "__pycache__", "target", "build", "dist", "venv"))
"""Folders of what was installed or built, not of the project's own files."""


def _exists(definition: ServerDefinition, root: Path, path: str | None) -> bool:
    try:
        command = expand(definition.command, os.environ)
        found = launch.program_path(command, path or os.environ.get("PATH"), root)
    except (FileNotFoundError, ValueError):
        return False
    # An absolute path comes back as it was given.
    return os.path.isfile(found) and os.access(found, os.X_OK)


def serves_workspace(
    found: tuple[ServerDefinition, ...], root: Path, path: str | None = None
) -> bool:
    """Whether one of `found` that navigates, whose program exists (on `path` outside
    `root`, or named by its absolute path), serves one of the workspace's files `_files`
    meets."""
    suffixes = {
        suffix
        for definition in found
        if definition.navigates and _exists(definition, root, path)
        for suffix in definition.extension_to_language
    }
    return bool(suffixes) and any(Path(name).suffix in suffixes for name in _files(root))


def _files(root: Path) -> Iterator[str]:
    """The names of the regular files among the first `MAX_ENTRIES` entries of `root`, met
    breadth first without following links, hidden and installed folders skipped."""
    folders, seen = deque([root]), 0
    while folders:
        try:
            with os.scandir(folders.popleft()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        return
                    if entry.is_file(follow_symlinks=False):
                        yield entry.name
                    elif entry.is_dir(follow_symlinks=False) and _looked_into(entry.name):
                        folders.append(Path(entry.path))
        except OSError:
            continue


def _looked_into(folder: str) -> bool:
    return not folder.startswith(".") and folder not in _SKIPPED
