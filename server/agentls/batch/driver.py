"""`agentls batch`: the driver. It reads the tasks (all of them checked before anything runs),
the journal (what already ended), starts what is left on an engine within the limits,
retries infrastructure deaths, and records each attempt as it ends.

Ctrl-C stops submitting and cancels what runs (each recorded `cancelled`, run again next
time); a second Ctrl-C kills the workers and ends at once (the journal holds every attempt
that ended before it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tasktree.runner import TaskOutcome, TaskSpec
from ..tasktree.spare_trees import remove_left
from .engine import Engine, WorkerLost
from .journal import Journal
from .limits import Budget, InFlight
from .outputs import Outputs
from .progress import BatchProgress
from .tasks import Task, TasksError, read_tasks, valid_id

EXIT_CANCELLED = 130


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    tasks: Path
    out: Path
    name: str | None = None
    """The batch's name in its branches (`agentls/<name>/<id>`); default: OUT's name."""
    workers: int | None = None
    ray: str | None = None
    """`auto` or a cluster's address: run on Ray instead of the local pool."""
    max_in_flight: int | None = None
    budget: float | None = None
    retries: int = 2
    retry_failed: bool = False
    sandbox_network: bool = False
    shared: bool = False
    keep_worktrees: bool = False
    worktrees: Path | None = None
    provider: str | None = None
    model: str | None = None
    tasks_per_worker: int = 0
    """0: warm workers; 1: a fresh process per task (local pool)."""

    @property
    def batch_name(self) -> str:
        return self.name or self.out.resolve().name


def make_engine(options: BatchOptions) -> Engine:
    if options.ray is not None:
        if options.ray.rsplit(":", 1)[0] in ("127.0.0.1", "localhost"):
            # A cluster on loopback is one machine's: without this, Ray turns the address
            # into the machine's network address before it dials (read as Ray is imported).
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        from .ray_engine import RayEngine  # Ray only when asked for: an optional extra

        return RayEngine(options.ray, options.retries, options.out / "logs")
    from .pool import LocalPool

    workers = options.workers or max(1, len(os.sched_getaffinity(0)))
    return LocalPool(workers, options.out / "logs", options.tasks_per_worker, options.provider)


class Driver:
    def __init__(
        self,
        options: BatchOptions,
        tasks: list[Task],
        journal: Journal,
        engine: Engine,
        progress: BatchProgress,
    ) -> None:
        self.options = options
        self.tasks = tasks
        self.journal = journal
        self.engine = engine
        self.progress = progress
        self.outputs = Outputs(options.out)
        self.limiter = InFlight(options.max_in_flight or engine.slots)
        self.budget = Budget(options.budget)
        self.stopping = False
        self.running: dict[str, asyncio.Task[None]] = {}

    @property
    def trees(self) -> Path:
        return self.options.worktrees or self.options.out / "worktrees"

    def spec(self, task: Task) -> TaskSpec:
        options, trees = self.options, self.trees
        return TaskSpec(
            id=task.id,
            repo=task.repo,
            prompt=task.prompt,
            branch=f"agentls/{options.batch_name}/{task.id}",
            tree=str((trees / task.id).resolve()),
            base=task.base,
            setup=task.setup,
            test=task.test,
            max_steps=task.max_steps,
            timeout=task.timeout,
            sandbox_network=options.sandbox_network,
            shared=options.shared,
            keep_tree=options.keep_worktrees,
            provider=options.provider,
            model=options.model,
        )

    def interrupt(self) -> None:
        if self.stopping:  # the second Ctrl-C: now
            self.engine.kill()
            self.progress.__exit__()
            self.progress.say("agentls batch: stopped at once")
            os._exit(EXIT_CANCELLED)
        self.stopping = True
        self.progress.say("agentls batch: cancelling the running tasks (Ctrl-C again: at once)")
        for task_id in self.running:
            self.engine.cancel(task_id)

    def live(self, event: dict[str, Any]) -> None:
        if event.get("type") == "rate_limited":
            self.limiter.rate_limited(float(event.get("seconds") or 0))

    async def attempt(self, task: Task) -> None:
        spec = self.spec(task)
        number = self.journal.attempts(task.id) + 1
        retries = 0
        self.progress.started(task.id)
        while True:
            try:
                outcome = await self.engine.run(spec, self.live)
                break
            except WorkerLost as lost:
                if self.stopping:
                    outcome = TaskOutcome(id=task.id, status="cancelled", error=str(lost))
                    break
                if retries >= self.options.retries:
                    words = f"{lost}; given up after {retries} retries"
                    outcome = TaskOutcome(id=task.id, status="error", error=words)
                    break
                retries += 1
                self.progress.say(f"{task.id}: {lost}; retry {retries} of {self.options.retries}")
            except Exception as error:  # a fault of ours: the task's line says so, others go on
                outcome = TaskOutcome(
                    id=task.id, status="error", error=f"{type(error).__name__}: {error}"
                )
                break
        self.record(outcome, number, retries)

    def record(self, outcome: TaskOutcome, attempt: int, retries: int) -> None:
        line = {**outcome.to_json(), "attempt": attempt, "retries": retries}
        self.journal.record(line)
        if outcome.status not in ("budget",):
            self.outputs.task_ended(outcome, attempt)
        self.budget.add(outcome.cost)
        note = outcome.error or ""
        self.progress.ended(outcome.id, outcome.status, outcome.tokens, outcome.cost, note)

    async def run(self, todo: list[Task]) -> None:
        pending = deque(todo)
        while True:
            if not self.stopping and not self.budget.exhausted:
                for _ in range(self.limiter.room(len(self.running))):
                    if not pending:
                        break
                    task = pending.popleft()
                    self.running[task.id] = asyncio.ensure_future(self.attempt(task))
            if not self.running and (not pending or self.stopping or self.budget.exhausted):
                break
            jobs = set(self.running.values())
            wait = self.limiter.wake_in()
            timeout = 0.5 if wait is None else min(wait, 0.5)
            if jobs:
                await asyncio.wait(jobs, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.sleep(timeout)
            for task_id, job in list(self.running.items()):
                if job.done():
                    del self.running[task_id]
                    job.result()
        if self.budget.exhausted and not self.stopping:
            for task in pending:
                error = f"the budget of ${self.budget.limit:g} was spent"
                outcome = TaskOutcome(id=task.id, status="budget", error=error, node="")
                self.progress.started(task.id)
                self.record(outcome, self.journal.attempts(task.id) + 1, 0)


async def run_batch(options: BatchOptions) -> int:
    try:
        tasks = read_tasks(options.tasks)
    except TasksError as error:
        for problem in error.problems:
            print(f"agentls batch: {problem}", file=sys.stderr)
        print("agentls batch: nothing was run", file=sys.stderr)
        return 2
    if not valid_id(options.batch_name):
        print(f"agentls batch: {options.batch_name!r} cannot name branches; use --name")
        return 2
    options.out.mkdir(parents=True, exist_ok=True)
    journal = Journal(options.out / "results.jsonl")
    todo = journal.to_run(tasks, options.retry_failed)
    engine = make_engine(options)
    progress = BatchProgress(len(todo))
    driver = Driver(options, tasks, journal, engine, progress)
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    skipped = len(tasks) - len(todo)
    progress.say(
        f"agentls batch {options.batch_name}: {len(todo)} to run"
        + (f" ({skipped} already ended: see results.jsonl)" if skipped else "")
        + f" on {engine.describe()}"
    )
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, driver.interrupt)
    try:
        with progress:
            await driver.run(todo)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        with contextlib.suppress(Exception):
            await engine.close()
        repositories = {Path(task.repo) for task in tasks}
        await asyncio.to_thread(remove_left, driver.trees, repositories)
        journal.close()
    predictions = driver.outputs.predictions(tasks, journal)
    driver.outputs.summary(tasks, journal)
    resume = progress.counts.to_resume() if driver.stopping else ""
    progress.say(
        f"agentls batch: {progress.counts.words()} in {time.monotonic() - started:.1f} s; "
        f"{predictions} predictions; {options.out / 'summary.md'}"
        + (f"; {resume}" if resume else "")
    )
    if driver.stopping:
        return EXIT_CANCELLED
    latest = journal.latest()
    return 0 if all(latest.get(t.id, {}).get("status") == "done" for t in tasks) else 1
