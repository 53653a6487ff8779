"""The batch as it goes: a rich progress bar on a terminal, one line per ended task
elsewhere (a CI log, a pipe); on stderr, so stdout stays for what a script reads."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

_NAMED = 3
"""Running tasks the bar names; the others are counted."""


@dataclass(kw_only=True)
class Counts:
    total: int
    done: int = 0
    failed: int = 0
    """failed, error and timeout: ended without the task done."""
    running: int = 0
    cancelled: int = 0
    other: int = 0
    """Not run for the budget."""
    tokens: int = 0
    cost: float = 0.0

    @property
    def left(self) -> int:
        ended = self.done + self.failed + self.cancelled + self.other
        return self.total - ended - self.running

    def words(self) -> str:
        cancelled = f"{self.cancelled} cancelled · " if self.cancelled else ""
        budget = f"{self.other} over budget · " if self.other else ""
        return (
            f"{self.done} done · {self.failed} failed · {cancelled}{budget}"
            f"{self.running} running · {self.left} left · {self.tokens:,} tokens · "
            f"${self.cost:.4f}"
        )

    def to_resume(self) -> str:
        """After a Ctrl-C: what a rerun of the same command runs (the journal skips the
        ended), or "" when nothing is left."""
        parts = []
        if self.cancelled:
            parts.append(f"{self.cancelled} cancelled")
        if self.left:
            parts.append(f"{self.left} not started")
        return f"run the same command again to resume ({' and '.join(parts)})" if parts else ""


class BatchProgress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.counts = Counts(total=total)
        self.running: list[str] = []
        """The tasks running, in the order they started."""
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
            self._task = self.bar.add_task(self.description(), total=total)

    def __enter__(self) -> BatchProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def say(self, text: str) -> None:
        self.console.print(text, markup=False)

    def started(self, task_id: str) -> None:
        self.counts.running += 1
        self.running.append(task_id)
        self._refresh()

    def ended(self, task_id: str, status: str, tokens: int, cost: float | None, note: str) -> None:
        counts = self.counts
        counts.running -= 1
        if task_id in self.running:
            self.running.remove(task_id)
        if status == "done":
            counts.done += 1
        elif status in ("failed", "error", "timeout"):
            counts.failed += 1
        elif status == "cancelled":
            counts.cancelled += 1
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
            self.bar.update(self._task, completed=finished, description=self.description())

    def description(self) -> str:
        """The bar's words: the counts, and which tasks run (the first few)."""
        names = self.running[:_NAMED]
        more = f" +{len(self.running) - _NAMED}" if len(self.running) > _NAMED else ""
        running = f" · running {', '.join(names)}{more}" if names else ""
        return self.counts.words() + running
