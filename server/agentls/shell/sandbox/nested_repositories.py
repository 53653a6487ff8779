"""Where the `.git` entries of a workspace are, at any depth, kept up to date cheaply.

A full walk around every command would cost a big workspace most of a second each time
(200,000 files). So the folders
are walked once (links not followed, `.git` folders not entered), and each folder's change
time kept. Later looks stat every known folder without listing it, and list only those
whose change time moved (a `.git` made, removed or renamed in a folder changes it) and the
folders new to the walk, whole (a folder renamed is a change of its parent, and new under
its new name).

The change time (`st_ctime`), not the modification time: a command can set a folder's
mtime back (`touch -d`), but not its ctime, which any change of the folder, that one
included, sets to the clock's time.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from pathlib import Path

CLOCK_SLACK_NS = 50_000_000
"""A folder changed up to this long before a look is listed again at the next one: the
kernel stamps changes with a coarse clock (a tick of 1 to 10 ms), so a change made just
after a look can carry the very time that look saw."""

GIT = ".git"
_BARE = {"HEAD", "objects", "refs"}
"""What git looks for to take a folder for a git folder itself."""
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NestedRepositories:
    """The `.git` entries (folders, `gitdir:` files and links) under one root, and the
    folders that are bare repositories.

    Safe to use from several threads: each look holds the lock.
    """

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self._lock = threading.Lock()
        self._changed: dict[str, int] = {}
        """Every folder under the root (itself included) and its change time when last
        listed; a parent always comes before its children."""
        self._gits: set[str] = set()
        self._looked_at: int | None = None

    def look(self) -> list[Path]:
        """Every `.git` entry under the root now (the root's own included), and every
        folder that looks like a bare repository."""
        with self._lock:
            started = time.time_ns()
            if self._looked_at is None:
                self._walk(self.root)
            else:
                self._list_changed(self._looked_at - CLOCK_SLACK_NS)
            self._looked_at = started
            return [Path(entry) for entry in sorted(self._gits)]

    def _list_changed(self, recent: int) -> None:
        gone: set[str] = set()
        lstat = os.lstat  # thousands of calls: one stat each, nothing more (no listing)
        for folder, known in list(self._changed.items()):
            if gone and os.path.dirname(folder) in gone:
                self._forget(folder, gone)  # never looked at through what replaced its parent
                continue
            try:
                status = lstat(folder)
            except OSError:
                self._forget(folder, gone)
                continue
            if not stat.S_ISDIR(status.st_mode):
                self._forget(folder, gone)
            elif status.st_ctime_ns != known or known >= recent:
                new = self._list(folder)
                if new is None:
                    self._forget(folder, gone)
                for path in new or ():
                    self._walk(path)

    def _forget(self, folder: str, gone: set[str]) -> None:
        gone.add(folder)
        self._changed.pop(folder, None)
        self._gits.discard(os.path.join(folder, GIT))
        self._gits.discard(folder)

    def _walk(self, top: str) -> None:
        """List `top` and every folder below it."""
        pending = [top]
        while pending:
            pending += self._list(pending.pop()) or ()

    def _list(self, folder: str) -> list[str] | None:
        """Record what `folder` holds now: its `.git` entry, if any, and its change time
        (taken before the listing, so that a change during it shows at the next look).
        Returns its folders new to the walk; None when it is no folder (now a link)."""
        entry = os.path.join(folder, GIT)
        self._gits.discard(entry)
        try:
            descriptor = os.open(folder, _FOLDER)  # a folder now a link is not listed
        except OSError:
            self._changed.pop(folder, None)
            return None
        self._gits.discard(folder)
        new: list[str] = []
        names: set[str] = set()
        try:
            self._changed[folder] = os.fstat(descriptor).st_ctime_ns
            with os.scandir(descriptor) as entries:
                for inside in entries:
                    names.add(inside.name)
                    if inside.name == GIT:
                        self._gits.add(entry)  # a folder, a file or a link: never entered
                    elif _is_folder(inside):
                        path = os.path.join(folder, inside.name)
                        if path not in self._changed:
                            new.append(path)
        except OSError:
            pass
        finally:
            os.close(descriptor)
        if names >= _BARE:
            self._gits.add(folder)  # git run in it takes it for a bare repository
        return new


def _is_folder(entry: os.DirEntry[str]) -> bool:
    with contextlib.suppress(OSError):
        return entry.is_dir(follow_symlinks=False)
    return False
