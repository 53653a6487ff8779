"""Ctrl-C while `agentls run` starts: noted, and acted on at the next point where stopping is
clean, never raised wherever it lands.

Python turns SIGINT into a KeyboardInterrupt at whatever line runs, and at start-up that is
most often an import: one raised inside a class body's `__set_name__` (every dataclass field
made with `field()`) comes out of Python 3.11 as a RuntimeError, a traceback and exit 1, and
a module interrupted half-way is left unusable. So while agentls starts, the signal only sets
a flag (`came`); the terminal door reads it once its own Ctrl-C handler is in place (the task
is not begun: exit 130), and leaving `deferred()` raises the KeyboardInterrupt it stood for.
A second Ctrl-C ends the process at once: nothing has begun that needs ending (no command
runs before the door's handler is in place), and the user insists.

Standard library only, and nothing heavy: it is in place before the rest of agentls loads."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

EXIT_CODE = 130
"""As a shell reports a process ended by Ctrl-C."""

_came = False


def _note(signum: int, frame: FrameType | None) -> None:
    global _came
    if _came:
        os.write(1, b"\n")
        os._exit(EXIT_CODE)
    _came = True


def came() -> bool:
    """Whether Ctrl-C came since `deferred()` began (and was not yet taken); takes it."""
    global _came
    seen, _came = _came, False
    return seen


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Within: Ctrl-C only noted (the main thread's; another thread cannot set handlers).
    On leaving, the previous handler is back, and a Ctrl-C noted and not taken is raised."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came():
        raise KeyboardInterrupt
