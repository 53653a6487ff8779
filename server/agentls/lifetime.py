"""Ending the server process at once, with no shell process left behind."""

from __future__ import annotations

import logging
import os
import signal
from types import FrameType
from typing import NoReturn

from .shell.process_groups import kill_all_groups


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
