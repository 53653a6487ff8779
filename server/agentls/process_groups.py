"""Every bash process group the server started, killed when the server goes, even by SIGKILL.

A group lives on after its step when the command left a job in the background. The groups
are killed when the process exits or is told to (see `lifetime.py`). A SIGKILL leaves the
server no chance to, so a small guardian process, started with the first group, holds a pipe
from the server: when the pipe closes, however the server ended, it kills the groups it was
told of. It runs in its own session, so a signal to the server's group does not reach it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys

_GUARDIAN = """
import os, sys
groups = set()
for line in sys.stdin:
    (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, 9)
    except OSError:
        pass
"""


def kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _exists(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        pass
    return True


class ProcessGroups:
    """The live groups; one is forgotten once no process is left in it (a group id is not
    reused while the group exists)."""

    def __init__(self) -> None:
        self._live: set[int] = set()
        self._guardian: subprocess.Popen[str] | None = None

    def add(self, group: int) -> None:
        for gone in [g for g in self._live if not _exists(g)]:
            self._live.discard(gone)
            self._tell_guardian("-", gone)
        self._live.add(group)
        self._tell_guardian("+", group)

    def kill_all(self) -> None:
        for group in self._live:
            kill_group(group)
        self._live.clear()

    def _tell_guardian(self, sign: str, group: int) -> None:
        if self._guardian is None:
            self._guardian = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _GUARDIAN],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                text=True,
                env={},  # it needs none, and the server's may hold an API key
            )
        assert self._guardian.stdin is not None
        # A guardian that was killed leaves the in-process kill, which covers all but SIGKILL.
        with contextlib.suppress(OSError):
            self._guardian.stdin.write(f"{sign}{group}\n")
            self._guardian.stdin.flush()


GROUPS = ProcessGroups()
kill_all_groups = GROUPS.kill_all
"""Kill every shell process group still running: when the process exits, or is told to."""
atexit.register(kill_all_groups)
