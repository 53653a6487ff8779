"""`background.maxRunning`: at most that many background tasks run at once on this machine (for
this user); the others wait in the queue, each in its own process.

A slot is a lock file held with `flock` by the task's process while it runs: the kernel lets
it go when the process ends, however it ends, so a killed task never holds a slot. A waiting
task tries the slots again every `POLL` seconds; the one that has waited longest goes first
(a task does not take a slot while an older one waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from ..disk.state import private_dir, state_base

POLL = 0.3


def slots_folder() -> Path:
    return private_dir(state_base() / "background" / "slots")


def _try(count: int) -> int | None:
    """A descriptor holding one of `count` slots, or None when all are taken."""
    folder = slots_folder()
    for number in range(count):
        handle = os.open(folder / f"{number}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(handle)
            continue
        return handle
    return None


@contextlib.asynccontextmanager
async def slot(count: int, my_turn: Callable[[], bool] = lambda: True) -> AsyncIterator[None]:
    """Hold one of `count` slots for the body; wait for one (cancellable) while `my_turn()`
    says an older task waits or none is free."""
    handle = None
    while handle is None:
        if my_turn():
            handle = _try(max(count, 1))
        if handle is None:
            await asyncio.sleep(POLL)
    try:
        yield
    finally:
        os.close(handle)  # the lock goes with the descriptor
