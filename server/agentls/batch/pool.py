"""The local engine: N worker processes (`worker.py`) on this machine, each running one task
at a time. Warm by default (a worker runs task after task: Python and the SDK start once);
`tasks_per_worker=1` gives each task a fresh process instead. Workers are forked from one
template process (`forkserver.py`), which alone pays the imports: on a machine with fewer
cores than workers, N separate starts would take N times as long.

A worker that dies mid-task (killed, out of memory) fails its task with `WorkerLost`: an
infrastructure error, which the driver retries; the pool forks another worker when one is
next needed. The template starts through the launcher like every program agentls runs: an
allow-listed environment, to which only the model's connection variables are added (the
worker is agentls itself, and reads its key as agentls does), in a private empty folder,
in a session of its own, as each worker is (a Ctrl-C at the terminal reaches the driver
only, which decides).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
from pathlib import Path
from typing import Any

from ..shell import launch
from ..tasktree.environment import worker_environment
from ..tasktree.runner import Live, TaskOutcome, TaskSpec
from .engine import WorkerLost
from .worker import LINE_LIMIT

GRACE = 60.0
"""Seconds past a task's own timeout before its worker is killed: the worker enforces the
timeout itself; this is for one that stopped answering."""

LET_GO = 10.0
"""Seconds a worker let go of has to remove its trees and end before it is killed."""


class _Worker:
    def __init__(self, orders: asyncio.StreamWriter, answers: asyncio.StreamReader) -> None:
        self.orders = orders
        self.answers = answers
        self.pid: int | None = None
        self.tasks = 0
        self.started = asyncio.get_running_loop().create_future()
        self.reply: asyncio.Future[TaskOutcome] | None = None
        self.live: Live | None = None
        self.reading = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while line := await self.answers.readline():
                message = json.loads(line)
                if "ready" in message and not self.started.done():
                    self.pid = int(message["ready"])
                    self.started.set_result(None)
                elif "live" in message and self.live is not None:
                    self.live(message["live"])
                elif "done" in message and self.reply is not None and not self.reply.done():
                    self.reply.set_result(TaskOutcome.from_json(message["done"]))
        # Its socket ended: the worker is gone (how, the forkserver wrote in the log).
        lost = WorkerLost("the worker process died (see logs/workers.log)")
        for waiting in (self.started, self.reply):
            if waiting is not None and not waiting.done():
                waiting.set_exception(lost)

    def send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError, RuntimeError):  # a dead worker's socket
            self.orders.write((json.dumps(message) + "\n").encode())

    @property
    def alive(self) -> bool:
        return not self.reading.done()

    def kill(self) -> None:
        # Only while its socket is open: the worker is alive then, so its pid is still its.
        if self.pid is not None and self.alive:
            launch.kill_group(self.pid)


class LocalPool:
    """`run(spec)` on one of `workers` processes; at most that many tasks at once."""

    def __init__(
        self, workers: int, logs: Path, tasks_per_worker: int = 0, provider: str | None = None
    ) -> None:
        self.slots = workers
        self.logs = logs
        self.tasks_per_worker = tasks_per_worker
        self.provider = provider
        self._idle: list[_Worker] = []
        self._busy: dict[str, _Worker] = {}
        self._room = asyncio.Semaphore(workers)
        self._template: asyncio.subprocess.Process | None = None
        self._control: socket.socket | None = None
        self._folder = contextlib.ExitStack()
        self._starting = asyncio.Lock()
        """One template, however many workers start at once."""

    def describe(self) -> str:
        warm = "fresh process per task" if self.tasks_per_worker == 1 else "warm"
        return f"{self.slots} local worker{'s' if self.slots != 1 else ''} ({warm})"

    async def _start_template(self) -> None:
        self._stop_template()
        self.logs.mkdir(parents=True, exist_ok=True)
        folder = self._folder.enter_context(launch.private_folder())
        argv = [sys.executable, "-m", "agentls.batch.forkserver"]
        argv += [self.provider] if self.provider else []
        ours, theirs = socket.socketpair()
        with theirs, open(self.logs / "workers.log", "ab") as log:
            self._template = await launch.start(
                launch.own(argv, folder, worker_environment(), None),
                stdin=theirs.fileno(),
                stdout=log,
                stderr=log,
            )
        self._control = ours

    async def _hand_over(self, channel: socket.socket) -> None:
        """Give `channel` to the template, which forks a worker on it (the template started
        first, or again if it died). Raises WorkerLost."""
        async with self._starting:
            for attempt in (1, 2):
                if self._control is None or attempt == 2:
                    await self._start_template()
                assert self._control is not None
                with contextlib.suppress(OSError):  # a dead template's socket
                    socket.send_fds(self._control, [b"w"], [channel.fileno()])
                    return
        raise WorkerLost("the workers' template process died")

    async def _start(self) -> _Worker:
        ours, theirs = socket.socketpair()
        try:
            with theirs:
                await self._hand_over(theirs)
        except WorkerLost:
            ours.close()
            raise
        answers, orders = await asyncio.open_unix_connection(sock=ours, limit=LINE_LIMIT)
        worker = _Worker(orders, answers)
        await worker.started
        return worker

    async def _worker(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
        return await self._start()

    async def run(self, spec: TaskSpec, live: Live | None = None) -> TaskOutcome:
        """Raises WorkerLost when the worker died under the task."""
        async with self._room:
            worker = await self._worker()
            worker.reply = asyncio.get_running_loop().create_future()
            worker.live = live
            self._busy[spec.id] = worker
            worker.send({"run": spec.to_json()})
            try:
                limit = None if spec.timeout is None else spec.timeout + GRACE
                try:
                    outcome = await asyncio.wait_for(asyncio.shield(worker.reply), limit)
                except asyncio.TimeoutError:
                    worker.kill()
                    return TaskOutcome(
                        id=spec.id, status="timeout", error="the worker stopped answering"
                    )
                except asyncio.CancelledError:
                    worker.kill()  # the driver is ending at once
                    raise
            finally:
                del self._busy[spec.id]
                worker.reply = worker.live = None
            worker.tasks += 1
            if self.tasks_per_worker and worker.tasks >= self.tasks_per_worker:
                await self._retire(worker)
            else:
                self._idle.append(worker)
            return outcome

    def cancel(self, task_id: str) -> None:
        """Ask the task's worker to cancel it: its outcome comes back `cancelled`."""
        if task_id in self._busy:
            self._busy[task_id].send({"cancel": True})

    def cancel_all(self) -> None:
        for task_id in list(self._busy):
            self.cancel(task_id)

    async def _retire(self, worker: _Worker) -> None:
        # Our half of its socket only: the worker reads the end of its orders, removes its
        # trees and ends, and its answers end then. Closing the whole socket would end our
        # reading at once, and the kill below would catch the worker in the midst of that.
        with contextlib.suppress(OSError, RuntimeError):
            worker.orders.write_eof()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(worker.reading), LET_GO)
        worker.kill()
        worker.orders.close()

    def _stop_template(self) -> None:
        if self._control is not None:
            self._control.close()  # it ends when it reads the end
            self._control = None

    def kill(self) -> None:
        """Every worker at once (a second Ctrl-C): their tasks' sandboxes die with them."""
        for worker in [*self._idle, *self._busy.values()]:
            worker.kill()
        if self._template is not None and self._template.returncode is None:
            launch.kill_group(self._template)

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        self._stop_template()
        await asyncio.gather(*(self._retire(worker) for worker in idle))
        if self._template is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._template.wait(), LET_GO)
            self.kill()
        self._folder.close()
