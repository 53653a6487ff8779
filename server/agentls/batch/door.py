"""`agentls batch`: its arguments and its start."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..settings.arguments import provider


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("a whole number, 1 or more")
    return int(text)


def add_command(commands: Any) -> argparse.ArgumentParser:
    """`agentls batch`, among the `agentls` commands."""
    batch: argparse.ArgumentParser = commands.add_parser(
        "batch",
        help="run many tasks (JSONL), each in a git worktree, on local workers or Ray",
        description="Run each task of TASKS (one JSON object a line: id, repo, prompt; "
        "optional base, setup, test, max_steps, timeout) in a worktree of its own, nobody "
        "asked; results in OUT (docs/batch.md). Run it again to go on where it stopped.",
    )
    batch.set_defaults(door=main)
    batch.add_argument("tasks", type=Path, help="the tasks file (JSONL)")
    batch.add_argument("-o", "--out", type=Path, required=True, help="the results folder")
    batch.add_argument("--name", help="the batch's name in its branches (default: OUT's name)")
    batch.add_argument(
        "--workers", type=_positive_int, help="local worker processes (default: the cores)"
    )
    batch.add_argument(
        "--ray",
        metavar="auto|ADDRESS",
        help="run on a Ray cluster instead (pip install 'agentls[ray]')",
    )
    batch.add_argument(
        "--max-in-flight", type=_positive_int, help="tasks at once (default: workers or slots)"
    )
    batch.add_argument("--budget", type=float, metavar="USD", help="stop starting tasks once spent")
    batch.add_argument(
        "--retries",
        type=int,
        default=2,
        help="retries of a task whose worker or node died (default 2)",
    )
    batch.add_argument(
        "--retry-failed", action="store_true", help="run failed, error and timeout tasks again"
    )
    batch.add_argument(
        "--sandbox-network", action="store_true", help="let sandboxed commands reach the network"
    )
    batch.add_argument(
        "--shared",
        action="store_true",
        help="a `git clone --shared` per task instead of a worktree",
    )
    batch.add_argument("--keep-worktrees", action="store_true", help="leave each task's tree")
    batch.add_argument("--worktrees", type=Path, help="where the trees go (default OUT/worktrees)")
    batch.add_argument(
        "--fresh-workers",
        action="store_true",
        help="a new worker process per task (default: warm workers)",
    )
    batch.add_argument("--provider", type=provider, help="as for agentls run")
    batch.add_argument("--model", help="as for agentls run")
    return batch


def main(arguments: argparse.Namespace) -> int:
    import asyncio

    from .driver import BatchOptions, run_batch

    options = BatchOptions(
        tasks=arguments.tasks,
        out=arguments.out,
        name=arguments.name,
        workers=arguments.workers,
        ray=arguments.ray,
        max_in_flight=arguments.max_in_flight,
        budget=arguments.budget,
        retries=max(0, arguments.retries),
        retry_failed=arguments.retry_failed,
        sandbox_network=arguments.sandbox_network,
        shared=arguments.shared,
        keep_worktrees=arguments.keep_worktrees,
        worktrees=arguments.worktrees,
        provider=arguments.provider,
        model=arguments.model,
        tasks_per_worker=1 if arguments.fresh_workers else 0,
    )
    return asyncio.run(run_batch(options))
