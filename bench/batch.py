"""`agentls batch`: 8 tasks on 4 workers beside 1 worker, the fake model answering each turn
after a fixed latency (what a real model costs, mostly waiting); and what a task costs before
its model is first asked (its worktree, the agent's start) on a big repository."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentls.batch.driver import BatchOptions, run_batch
from agentls.tasktree import worktree
from agentls.tasktree.runner import TaskRun, TaskSpec
from agentls.tasktree.spare_trees import SpareTrees

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
    options = BatchOptions(tasks=folder / "tasks.jsonl", out=folder / "out", workers=workers)
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
    """From a task's start in a warm worker to its first request to the model."""

    files: int
    first_seconds: float
    """The worker's first task on the repository: git checks out every file."""
    next_seconds: float
    """Its next tasks there at the same base, as a batch's tasks are by default (the median
    of 3): the tree it kept, reset (git writes back what the last task changed)."""
    other_base_seconds: float
    """Its next task at another base, `changed` files away."""
    changed: int


async def _first_request(
    spec: TaskSpec, fake: FakeAnthropic, spares: SpareTrees, latency: float
) -> float:
    fake.reset()
    edit = {"path": "app.py", "old_text": "x = 0", "new_text": "x = 1"}
    turns = (reply(tool_use("edit_file", edit), delay=latency), reply(text("Done."), delay=latency))
    fake.script_for(spec.prompt, *turns)
    # What the bench wrote just before (the repository, the last tree) written out first:
    # the disk's backlog of a moment ago is not this task's cost.
    os.sync()
    started = time.monotonic()
    outcome = await TaskRun(spec, spares=spares).run()
    if outcome.status != "done" or not outcome.patch:
        raise RuntimeError(f"the overhead task ended {outcome.status}: {outcome.error}")
    return fake.requests[0].received - started


async def task_overhead(
    home: Path, env: Mapping[str, str], files: int, latency: float = 1.0
) -> TaskOverhead:
    """In a warm worker (a first task ran on a small repository), a task's start on a
    repository of `files` files: the worker's first there, its next three at the same base,
    then one at the commit before (which changes every 100th file); each task edits a file,
    the model answering after `latency`."""
    big = make_repository(home / "big-repo", files)
    counted = len(worktree.git(["ls-files"], big).splitlines())
    changed = _change_every_hundredth(big)
    small = make_repository(home / "small-repo")
    spares = SpareTrees()
    with FakeAnthropic() as fake, environ({**env, "ANTHROPIC_BASE_URL": fake.url}):

        def spec(repo: Path, name: str, base: str | None = None) -> TaskSpec:
            tree = str(home / "trees" / name)
            prompt = f"task {name}: set x."
            return TaskSpec(
                id=name,
                repo=str(repo),
                prompt=prompt,
                branch=f"agentls/b/{name}",
                tree=tree,
                base=base,
            )

        try:
            await _first_request(spec(small, "warm"), fake, spares, latency)
            first = await _first_request(spec(big, "first"), fake, spares, latency)
            again = [
                await _first_request(spec(big, f"next-{n}"), fake, spares, latency)
                for n in range(3)
            ]
            other = await _first_request(spec(big, "other", "HEAD~1"), fake, spares, latency)
        finally:
            spares.close()
    shutil.rmtree(home / "trees", ignore_errors=True)
    return TaskOverhead(counted, first, statistics.median(again), other, changed)


def _change_every_hundredth(repository: Path) -> int:
    names = worktree.git(["ls-files", "src"], repository).splitlines()[::100]
    for name in names:
        with open(repository / name, "a") as file:
            file.write("# changed\n")
    subprocess.run([*GIT, "commit", "-qam", "more"], cwd=repository, check=True)
    return len(names)
