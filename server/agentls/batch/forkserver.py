"""`python -m agentls.batch.forkserver [PROVIDER]`: where the local pool's workers come from.
It imports what a task needs once (agentls, the SDK of the provider given or set in the
user's settings: together over a second of CPU), then forks each worker the pool asks for,
so N workers on a few cores start in milliseconds, not in N seconds. (Python's
multiprocessing has a fork server too, but starts it itself, outside agentls's launcher,
with the driver's whole environment.)

Its stdin is a Unix socket from a socketpair: no path anyone else could connect to. Each
message the pool sends carries one descriptor, the worker's end of a new socketpair; the
forked worker speaks `worker.py`'s protocol on it, in a session of its own (so the pool can
kill its process group). A worker's death reaches the pool as the end of that socket; its
exit status is written to the log (this process's stdout and stderr). The pool closing the
stdin socket ends this process; the workers end when their own sockets close.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import signal
import socket
import sys
import traceback
from types import FrameType
from typing import NoReturn

from ..models.anthropic import sdk_of
from ..settings.user import load as load_user_settings
from . import worker


def _reap(signum: int, frame: FrameType | None) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        print(f"agentls batch: worker {pid} ended ({how})", file=sys.stderr, flush=True)


def _work(channel: socket.socket, control: socket.socket) -> NoReturn:
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # asyncio reaps this worker's children
        os.setsid()
        control.close()  # it was stdin: /dev/null takes its place
        null = os.open(os.devnull, os.O_RDONLY)
        if null != 0:
            os.dup2(null, 0)
            os.close(null)
        asyncio.run(worker.serve(channel))
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # Finalizing the interpreter (the SDK's thousands of classes) takes a third of a
        # second; nothing is left to write (the socket is closed, the logs flushed).
        os._exit(code)


def main() -> None:
    control = socket.socket(fileno=sys.stdin.fileno())
    provider = sys.argv[1] if len(sys.argv) > 1 else load_user_settings()[0].provider
    importlib.import_module(sdk_of(provider))
    signal.signal(signal.SIGCHLD, _reap)
    while True:
        data, descriptors, _, _ = socket.recv_fds(control, 16, 1)
        if not data:  # the pool let go of us
            break
        for descriptor in descriptors:
            channel = socket.socket(fileno=descriptor)
            if os.fork() == 0:
                _work(channel, control)
            channel.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
