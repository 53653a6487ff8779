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


def _stat(pid: int | str) -> tuple[int, int] | None:
    """The parent and the start time (clock ticks after boot) of process `pid`, if it runs."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # The name, in brackets, may hold spaces: count the fields after it.
            fields = stat.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot), None if there is none."""
    found = _stat(pid)
    return found[1] if found else None


def descendants(pid: int) -> list[tuple[int, int]]:
    """The processes below `pid` (with their start times), whichever group or session they
    moved to: `setsid cmd &` leaves bash's group, not its tree, while bash runs."""
    children: dict[int, list[tuple[int, int]]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc (macOS): the group is all there is to kill
        return []
    for name in names:
        found = _stat(name) if name.isdigit() else None
        if found:
            children.setdefault(found[0], []).append((int(name), found[1]))
    below, parents = [], [pid]
    while parents:
        for child in children.get(parents.pop(), []):
            below.append(child)
            parents.append(child[0])
    return below


def kill_process(pid: int, start: int) -> None:
    """SIGKILL `pid` if it is still the process that started at `start`: through a pidfd,
    so that a process given the id after the check is never the one signalled."""
    if not hasattr(os, "pidfd_open"):  # not Linux: no safe way, so no kill
        return
    try:
        handle = os.pidfd_open(pid)
    except OSError:  # gone, or no pidfds (Linux before 5.3)
        return
    try:
        if start_time(pid) == start:
            signal.pidfd_send_signal(handle, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(handle)


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
    """Kill the group, and what its leader started that left it, if the group is ours."""
    if still_ours(group, start):
        strays = descendants(group) if start_time(group) is not None else []
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
        for pid, started in strays:
            kill_process(pid, started)


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
