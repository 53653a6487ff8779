"""A warm worker of the local pool, forked by `forkserver.py`. It runs one task at a time,
told on its socket, and answers there, one JSON object a line:

- in: `{"run": TaskSpec}` to start a task, `{"cancel": true}` to cancel it;
- out: `{"ready": pid}` once started, `{"live": event}` while a task runs (steps, 429s),
  `{"done": TaskOutcome}` when it ends.

Its socket closing (the driver died or let it go) cancels the running task and ends the
worker: nothing outlives the driver but what the task's own cleanup needs. Warm, it pays
Python's and the SDK's start once, not per task, and keeps its last tree of each repository
for the next task there (`spare_trees.py`).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from typing import Any

from ..tasktree.runner import TaskRun, TaskSpec
from ..tasktree.spare_trees import SpareTrees

LINE_LIMIT = 64 * 1024 * 1024
"""Bytes of one message: a task's outcome carries its patch and its events."""


class Worker:
    def __init__(self, answers: asyncio.StreamWriter) -> None:
        self.answers = answers
        self.current: tuple[TaskRun, asyncio.Task[None]] | None = None
        self.spares = SpareTrees()

    def send(self, message: dict[str, Any]) -> None:
        self.answers.write((json.dumps(message, ensure_ascii=False) + "\n").encode())

    async def _run(self, run: TaskRun) -> None:
        outcome = await run.run()
        self.current = None
        self.send({"done": outcome.to_json()})

    def handle(self, message: dict[str, Any]) -> None:
        if "run" in message and self.current is None:
            spec = TaskSpec.from_json(message["run"])
            run = TaskRun(spec, lambda e: self.send({"live": e}), self.spares)
            self.current = (run, asyncio.ensure_future(self._run(run)))
        elif "cancel" in message and self.current is not None:
            self.current[0].cancel()

    async def serve(self, orders: asyncio.StreamReader) -> None:
        self.send({"ready": os.getpid()})
        while line := await orders.readline():
            self.handle(json.loads(line))
        if self.current is not None:  # the driver is gone: stop, clean up, leave
            run, job = self.current
            run.cancel()
            await asyncio.gather(job, return_exceptions=True)
        await asyncio.to_thread(self.spares.close)


async def serve(channel: socket.socket) -> None:
    """Be a worker on `channel` until the driver closes it."""
    orders, answers = await asyncio.open_unix_connection(sock=channel, limit=LINE_LIMIT)
    await Worker(answers).serve(orders)
    answers.close()
    await answers.wait_closed()
