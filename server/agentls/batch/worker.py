"""`python -m agentls.batch.worker`: a warm worker of the local pool. It runs one task at a
time, told on stdin, and answers on stdout, one JSON object a line:

- in: `{"run": TaskSpec}` to start a task, `{"cancel": true}` to cancel it;
- out: `{"ready": pid}` once started, `{"live": event}` while a task runs (steps, 429s),
  `{"done": TaskOutcome}` when it ends.

Its stdin closing (the driver died or let it go) cancels the running task and ends the
worker: nothing outlives the driver but what the task's own cleanup needs. Warm, it pays
Python's and the SDK's start once, not per task. Whatever else would print on stdout
(a library's stray print) goes to stderr, which the driver keeps in a log file.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import IO, Any

from .runner import TaskRun, TaskSpec


class Worker:
    def __init__(self, answers: IO[str]) -> None:
        self.answers = answers
        self.current: tuple[TaskRun, asyncio.Task[None]] | None = None

    def send(self, message: dict[str, Any]) -> None:
        self.answers.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.answers.flush()

    async def _run(self, run: TaskRun) -> None:
        outcome = await run.run()
        self.current = None
        self.send({"done": outcome.to_json()})

    def handle(self, message: dict[str, Any]) -> None:
        if "run" in message and self.current is None:
            run = TaskRun(TaskSpec.from_json(message["run"]), lambda e: self.send({"live": e}))
            self.current = (run, asyncio.ensure_future(self._run(run)))
        elif "cancel" in message and self.current is not None:
            self.current[0].cancel()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        self.send({"ready": os.getpid()})
        while line := await reader.readline():
            self.handle(json.loads(line))
        if self.current is not None:  # the driver is gone: stop, clean up, leave
            run, job = self.current
            run.cancel()
            await asyncio.gather(job, return_exceptions=True)


def main() -> None:
    # The protocol gets stdout's descriptor of its own; fd 1 becomes stderr for the rest.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    asyncio.run(Worker(answers).serve())


if __name__ == "__main__":
    main()
