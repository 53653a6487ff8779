"""The local engine: N worker processes (`worker.py`) on this machine, each running one task
at a time. Warm by default (a worker runs task after task: Python and the SDK start once);
`tasks_per_worker=1` gives each task a fresh process instead.

A worker that dies mid-task (killed, out of memory) fails its task with `WorkerLost`: an
infrastructure error, which the driver retries; the pool starts another worker when one is
next needed. Workers start through the launcher like every program agentls runs: an
allow-listed environment, to which only the model's connection variables are added (the
worker is agentls itself, and reads its key as agentls does), in a process group of its own
(a Ctrl-C at the terminal reaches the driver only, which decides).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from ..shell import launch
from .engine import WorkerLost
from .runner import Live, TaskOutcome, TaskSpec

_CONNECTION = ("_API_KEY", "_AUTH_TOKEN", "_BASE_URL", "_API_BASE")

GRACE = 60.0
"""Seconds past a task's own timeout before its worker is killed: the worker enforces the
timeout itself; this is for one that stopped answering."""


def worker_environment(source: dict[str, str] | None = None) -> dict[str, str]:
    """The launcher's allow-list, plus what configures the model (`X_API_KEY`, `X_BASE_URL`,
    `AGENTLS_*`), which agentls reads as the user's own: the worker is agentls."""
    source = dict(os.environ if source is None else source)
    model = [n for n in source if n.endswith(_CONNECTION) or n.startswith("AGENTLS_")]
    return {**launch.environment(model, source), "PYTHONSAFEPATH": "1"}


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.tasks = 0
        self.reply: asyncio.Future[TaskOutcome] | None = None
        self.live: Live | None = None
        self.reading = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            if "live" in message and self.live is not None:
                self.live(message["live"])
            elif "done" in message and self.reply is not None and not self.reply.done():
                self.reply.set_result(TaskOutcome.from_json(message["done"]))
        code = await self.process.wait()
        if self.reply is not None and not self.reply.done():
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            self.reply.set_exception(WorkerLost(f"the worker process died ({how})"))

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError, RuntimeError):  # a dead worker's pipe
            self.process.stdin.write((json.dumps(message) + "\n").encode())

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self.reading.done()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)


class LocalPool:
    """`run(spec)` on one of `workers` processes; at most that many tasks at once."""

    def __init__(self, workers: int, logs: Path, tasks_per_worker: int = 0) -> None:
        self.slots = workers
        self.logs = logs
        self.tasks_per_worker = tasks_per_worker
        self._idle: list[_Worker] = []
        self._busy: dict[str, _Worker] = {}
        self._room = asyncio.Semaphore(workers)

    def describe(self) -> str:
        warm = "fresh process per task" if self.tasks_per_worker == 1 else "warm"
        return f"{self.slots} local worker{'s' if self.slots != 1 else ''} ({warm})"

    async def _start(self) -> _Worker:
        self.logs.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "agentls.batch.worker"]
        with open(self.logs / "workers.log", "ab") as log:
            process = await launch.start(
                launch.own(argv, self.logs, worker_environment(), None),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                limit=64 * 1024 * 1024,
            )
        worker = _Worker(process)
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
                    return TaskOutcome(spec.id, "timeout", error="the worker stopped answering")
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
        if worker.process.stdin is not None:
            worker.process.stdin.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(worker.process.wait(), 10)
        worker.kill()

    def kill(self) -> None:
        """Every worker at once (a second Ctrl-C): their tasks' sandboxes die with them."""
        for worker in [*self._idle, *self._busy.values()]:
            worker.kill()

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        await asyncio.gather(*(self._retire(worker) for worker in idle))
