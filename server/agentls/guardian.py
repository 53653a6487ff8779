"""The guardian of bash's process groups, and how to tell a group is still the one we started.

`process_groups.py` starts this file as a script (`python -I -S guardian.py`), in a session of
its own, and tells it on its stdin of each group: `+<group> <start>` when one starts, `-<group>`
when it is gone. When the pipe closes, however the server ended (SIGKILL included), it kills
the groups left. It imports nothing but the standard library: it must start fast and run
without the package on its path.

A group id is a process id, and process ids are reused: a group is killed only while it is
still ours, known by the start time of its first process (its leader).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot), None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # The name, in brackets, may hold spaces: count the fields after it.
            return int(stat.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def still_ours(group: int, start: int | None) -> bool:
    """Whether group `group`, led at first by a process started at `start`, is still ours.

    While its leader lives, the leader's start time says it. Once the leader is gone, the id
    is not reused while the group has a process left, so a group that exists is ours: unless
    it emptied, the id went to a new leader, and that one exited too, leaving its own group
    behind; that is not told apart. (The server forgets a group as soon as it finds it
    empty, which keeps this to groups that outlived their step.)
    """
    now = start_time(group)
    if now is not None:
        return now == start or start is None
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user: not one we started
        return False
    return True


def kill_if_ours(group: int, start: int | None) -> None:
    if still_ours(group, start):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def main() -> None:
    groups: dict[int, int | None] = {}
    for line in sys.stdin:
        fields = line[1:].split()
        if line[0] == "+":
            groups[int(fields[0])] = int(fields[1]) if fields[1:] else None
        else:
            groups.pop(int(fields[0]), None)
    for group, start in groups.items():
        kill_if_ours(group, start)


if __name__ == "__main__":
    main()
