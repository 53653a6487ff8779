"""Ending the server process at once, with no shell process left behind."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
from collections.abc import Iterator
from types import FrameType
from typing import NoReturn

from ..shell.process_groups import kill_all_groups


def exit_now(code: int) -> NoReturn:
    """Kill the shell groups and leave, without waiting for pygls's stdin reader thread
    (a client that keeps the pipe open would keep it blocked forever)."""
    kill_all_groups()
    logging.shutdown()
    os._exit(code)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    kill_all_groups()
    # Then die of the signal, as the sender expects.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def kill_shells_on_signals() -> None:
    """SIGTERM (an editor stopping its server), SIGHUP (a closed terminal) and SIGINT (Ctrl-C
    in a terminal) would end the process at once and leave bash's process groups running;
    kill them first. SIGINT would otherwise be a KeyboardInterrupt that pygls's stdin reader
    thread holds up, until a second Ctrl-C aborts the interpreter."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _on_signal)


def start_serving(log_file: str | None) -> None:
    """What a server door (LSP, ACP) does first: logs to a file or stderr, never stdout (the
    protocol's channel), and no shell left behind by a signal."""
    from .logs import configure

    configure(log_file)
    kill_shells_on_signals()


@contextlib.contextmanager
def loading_front_end() -> Iterator[None]:
    """Importing a front end makes many objects that live as long as the process does
    (lsprotocol's types, ACP's schema): looking for garbage among them again and again while
    they are made only delays the editor's first answer. Collections are rarer meanwhile
    (a few MiB more held: never collecting at all held 9 MiB), and what was made is frozen,
    never looked at again."""
    thresholds = gc.get_threshold()
    gc.set_threshold(50_000, 50, 50)
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(*thresholds)
