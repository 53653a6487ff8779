"""The batch as it goes: a rich progress bar on a terminal, one line per ended task
elsewhere (a CI log, a pipe); on stderr, so stdout stays for what a script reads."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


@dataclass(kw_only=True)
class Counts:
    total: int
    done: int = 0
    failed: int = 0
    """failed, error and timeout: ended without the task done."""
    running: int = 0
    other: int = 0
    """cancelled and budget."""
    tokens: int = 0
    cost: float = 0.0

    @property
    def left(self) -> int:
        return self.total - self.done - self.failed - self.running - self.other

    def words(self) -> str:
        return (
            f"{self.done} done · {self.failed} failed · {self.running} running · "
            f"{self.left} left · {self.tokens:,} tokens · ${self.cost:.4f}"
        )


class BatchProgress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.counts = Counts(total=total)
        self.console = Console(file=stream or sys.stderr, highlight=False)
        self.bar: Progress | None = None
        self._task: TaskID | None = None
        if self.console.is_terminal:
            self.bar = Progress(
                TextColumn("batch"),
                BarColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=self.console,
            )
            self._task = self.bar.add_task(self.counts.words(), total=total)

    def __enter__(self) -> BatchProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def say(self, text: str) -> None:
        self.console.print(text, markup=False)

    def started(self) -> None:
        self.counts.running += 1
        self._refresh()

    def ended(self, task_id: str, status: str, tokens: int, cost: float | None, note: str) -> None:
        counts = self.counts
        counts.running -= 1
        if status == "done":
            counts.done += 1
        elif status in ("failed", "error", "timeout"):
            counts.failed += 1
        else:
            counts.other += 1
        counts.tokens += tokens
        counts.cost += cost or 0.0
        if self.bar is None:
            self.say(f"{task_id}: {status}{f' ({note})' if note else ''} · {counts.words()}")
        self._refresh()

    def not_run(self, n: int) -> None:
        self.counts.other += n
        self._refresh()

    def _refresh(self) -> None:
        if self.bar is not None and self._task is not None:
            finished = self.counts.total - self.counts.left - self.counts.running
            self.bar.update(self._task, completed=finished, description=self.counts.words())
