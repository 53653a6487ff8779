"""What the driver asks of an engine (the local pool, Ray): run one task, cancel it, stop."""

from __future__ import annotations

from typing import Protocol

from ..tasktree.runner import Live, TaskOutcome, TaskSpec


class WorkerLost(Exception):
    """The process or node that ran a task died: not the task's fault, worth a retry."""


class Engine(Protocol):
    slots: int
    """How many tasks it runs at once (workers, or the cluster's slots)."""

    def describe(self) -> str: ...

    async def run(self, spec: TaskSpec, live: Live | None = None) -> TaskOutcome:
        """The task's outcome; raises WorkerLost when what ran it died."""
        ...

    def cancel(self, task_id: str) -> None:
        """Stop a running task: its `run` returns a `cancelled` outcome soon."""

    def kill(self) -> None:
        """Stop everything at once (a second Ctrl-C)."""

    async def close(self) -> None: ...
