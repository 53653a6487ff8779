"""`OUT/results.jsonl`: one line per attempt, on disk before the driver goes on.

The journal is the batch's truth: not Ray's state, not the worker's, not the branches. A
line is written, flushed and fsync'd as its attempt ends, so a driver killed at any moment
loses only the attempts that were running; running the batch again reads the journal and
runs only the ids without a final status.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from .tasks import Task

Status = Literal["done", "failed", "error", "timeout", "cancelled", "budget"]

FINAL: frozenset[str] = frozenset({"done", "failed", "error", "timeout"})
"""An id with one of these is not run again; `cancelled` and `budget` are left for the next
run (the task never had its chance)."""

RETRIED_ON_ASK: frozenset[str] = frozenset({"failed", "error", "timeout"})
"""What `--retry-failed` runs again."""

FIELDS = (
    "id",
    "attempt",
    "status",
    "steps",
    "tokens",
    "cost",
    "branch",
    "patch_sha256",
    "test_exit",
    "node",
    "seconds",
    "error",
    "retries",
)


class Journal:
    """The results file, read at start and appended to as attempts end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[dict[str, Any]] = []
        self.skipped: list[int] = []
        """Line numbers that were not JSON: the last one, torn by a driver killed mid-write."""
        if path.exists():
            for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    line = json.loads(text)
                except json.JSONDecodeError:
                    self.skipped.append(number)
                    continue
                if isinstance(line, dict) and isinstance(line.get("id"), str):
                    self.lines.append(line)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (held for the batch)
        if self.skipped and path.stat().st_size and not _ends_with_newline(path):
            self._file.write("\n")  # a torn line stays alone on its line

    def close(self) -> None:
        self._file.close()

    def record(self, line: dict[str, Any]) -> None:
        """Append `line` (the fields of FIELDS) and make it durable before returning."""
        ordered = {name: line.get(name) for name in FIELDS}
        self._file.write(json.dumps(ordered, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self.lines.append(ordered)

    def latest(self) -> dict[str, dict[str, Any]]:
        """Each id's last line."""
        return {line["id"]: line for line in self.lines}

    def attempts(self, task_id: str) -> int:
        return sum(1 for line in self.lines if line["id"] == task_id)

    def to_run(self, tasks: Iterable[Task], retry_failed: bool) -> list[Task]:
        """The tasks without a final status (with `retry_failed`, also those that failed,
        erred or timed out), in the file's order."""
        latest = self.latest()
        again = RETRIED_ON_ASK if retry_failed else frozenset()
        chosen = []
        for task in tasks:
            status = latest.get(task.id, {}).get("status")
            if status not in FINAL or status in again:
                chosen.append(task)
        return chosen


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"
