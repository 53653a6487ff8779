"""`agentls batch`: 8 tasks on 4 workers beside 1 worker, the fake model answering each turn
after a fixed latency (what a real model costs, mostly waiting); and what a task costs before
its model is first asked (its worktree, the agent's start) on a big repository."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentls.batch import worktree
from agentls.batch.driver import BatchOptions, run_batch
from agentls.batch.runner import TaskRun, TaskSpec

from .api import FakeAnthropic, reply, text, tool_use
from .search import make_tree

GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"]


def make_repository(root: Path, files: int = 0) -> Path:
    """A repository with app.py, and `files` files of real source beside it."""
    root.mkdir(parents=True)
    if files:
        make_tree(root / "src", files)
    (root / "app.py").write_text("x = 0\n")
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "."], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "start"], cwd=root, check=True)
    return root


@contextmanager
def environ(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@dataclass(frozen=True)
class BatchSpeed:
    tasks: int
    latency: float
    """Seconds the fake waits before each answer."""
    workers: int
    seconds: float
    one_worker_seconds: float


def _script(fake: FakeAnthropic, ids: list[str], latency: float) -> None:
    for number, task_id in enumerate(ids, 1):
        edit = {"path": "app.py", "old_text": "x = 0", "new_text": f"x = {number}"}
        fake.script_for(
            f"task {task_id}:",
            reply(tool_use("edit_file", edit), delay=latency),
            reply(text("Done."), delay=latency),
        )


async def _batch(
    home: Path, fake: FakeAnthropic, workers: int, tasks: int, latency: float
) -> float:
    folder = home / f"batch-{workers}"
    make_repository(folder / "repo")
    ids = [f"t{n}" for n in range(tasks)]
    lines = [{"id": i, "repo": "repo", "prompt": f"task {i}: set x."} for i in ids]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    _script(fake, ids, latency)
    started = time.monotonic()
    options = BatchOptions(folder / "tasks.jsonl", folder / "out", workers=workers)
    status = await run_batch(options)
    seconds = time.monotonic() - started
    if status != 0:
        raise RuntimeError(f"the batch on {workers} workers failed: see {folder / 'out'}")
    return seconds


async def batch_speed(
    home: Path, env: Mapping[str, str], tasks: int = 8, workers: int = 4, latency: float = 1.0
) -> BatchSpeed:
    """The whole `agentls batch` (workers' start included) on `workers`, then on one."""
    with FakeAnthropic() as fake, environ({**env, "ANTHROPIC_BASE_URL": fake.url}):
        many = await _batch(home, fake, workers, tasks, latency)
        one = await _batch(home, fake, 1, tasks, latency)
    return BatchSpeed(tasks, latency, workers, many, one)


@dataclass(frozen=True)
class TaskOverhead:
    files: int
    worktree_seconds: float
    """Making the task's worktree at its base (git checks out every file)."""
    first_request_seconds: float
    """From the task's start in a warm worker to its first request to the model."""


async def _first_request(spec: TaskSpec, fake: FakeAnthropic) -> float:
    fake.reset()
    fake.script_for(spec.prompt, reply(text("Done.")))
    started = time.monotonic()
    outcome = await TaskRun(spec).run()
    if outcome.status != "done":
        raise RuntimeError(f"the overhead task ended {outcome.status}: {outcome.error}")
    return fake.requests[0].received - started


async def task_overhead(home: Path, env: Mapping[str, str], files: int) -> TaskOverhead:
    """In a warm process (a first task ran on a small repository), the cost of a task's
    start on a repository of `files` files."""
    big = make_repository(home / "big-repo", files)
    counted = len(worktree.git(["ls-files"], big).splitlines())
    small = make_repository(home / "small-repo")
    with FakeAnthropic() as fake, environ({**env, "ANTHROPIC_BASE_URL": fake.url}):

        def spec(repo: Path, name: str) -> TaskSpec:
            tree = str(home / "trees" / name)
            return TaskSpec(name, str(repo), f"task {name}: answer.", f"agentls/b/{name}", tree)

        await _first_request(spec(small, "warm"), fake)
        first = await _first_request(spec(big, "big"), fake)
        started = time.monotonic()
        tree = worktree.make(big, None, home / "trees" / "alone")
        made = time.monotonic() - started
        worktree.remove(big, tree.path)
    shutil.rmtree(home / "trees", ignore_errors=True)
    return TaskOverhead(counted, made, first)


def run(home: Path, env: Mapping[str, str], files: int) -> tuple[BatchSpeed, TaskOverhead]:
    speed = asyncio.run(batch_speed(home, env))
    overhead = asyncio.run(task_overhead(home, env, files))
    return speed, overhead
