"""Every bash process group the server started, killed when the server goes, even by SIGKILL.

A group lives on after its step when the command left a job in the background. The groups
are killed when the process exits or is told to (see `serving/lifetime.py`). A SIGKILL leaves the
server no chance to, so a small guardian process (`guardian.py`), started with the first
group, holds a pipe from the server: when the pipe closes, however the server ended, it kills
the groups it was told of. It runs in its own session, so a signal to the server's group does
not reach it. A group is killed only while it is still ours: process ids are reused.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
from pathlib import Path

from . import guardian, launch


def _exists(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        pass
    return True


class ProcessGroups:
    """The live groups, each with the start time of its leader; one is forgotten once no
    process is left in it."""

    def __init__(self) -> None:
        self._live: dict[int, int | None] = {}
        self._guardian: launch.Popen[str] | None = None

    def add(self, group: int) -> None:
        """Record `group`, led by a child of ours not yet reaped (so its start time is sure)."""
        for gone in [g for g in self._live if not _exists(g)]:
            self.forget(gone)
        start = guardian.start_time(group)
        self._live[group] = start
        self._tell_guardian(f"+{group} {start if start is not None else ''}")

    def forget(self, group: int) -> None:
        if group in self._live:
            del self._live[group]
            self._tell_guardian(f"-{group}")

    def forget_if_empty(self, group: int) -> None:
        if not _exists(group):
            self.forget(group)

    def kill(self, group: int) -> None:
        if group in self._live:
            guardian.kill_if_ours(group, self._live[group])

    def kill_all(self) -> None:
        for group, start in self._live.items():
            guardian.kill_if_ours(group, start)
        self._live.clear()

    def _tell_guardian(self, line: str) -> None:
        if self._guardian is None:
            # It needs no variable, and the server's may hold an API key.
            argv = [sys.executable, "-I", "-S", guardian.__file__]
            itself = launch.own(argv, Path("/"), {}, None)
            self._guardian = launch.popen(
                itself,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        assert self._guardian.stdin is not None
        # A guardian that was killed leaves the in-process kill, which covers all but SIGKILL.
        with contextlib.suppress(OSError):
            self._guardian.stdin.write(line + "\n")
            self._guardian.stdin.flush()


GROUPS = ProcessGroups()
kill_all_groups = GROUPS.kill_all
"""Kill every shell process group still running: when the process exits, or is told to."""
atexit.register(kill_all_groups)
