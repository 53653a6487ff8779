"""What a batch leaves for people's tools: patches, trajectories, SWE-bench predictions and a
summary table. Written by the driver alone, from the journal and what workers sent back."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..tasktree.runner import TaskOutcome
from .journal import FINAL, Journal
from .tasks import Task


def write_atomically(path: Path, text: str) -> None:
    """Written whole or not at all: a reader (or a killed driver) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class Outputs:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.patches = out / "patches"
        self.trajectories = out / "trajectories"

    def task_ended(self, outcome: TaskOutcome, attempt: int) -> None:
        """The attempt's patch (when it made a commit) and its events."""
        if outcome.branch is not None:
            write_atomically(self.patches / f"{outcome.id}.diff", outcome.patch)
        trajectory = {
            "id": outcome.id,
            "attempt": attempt,
            "status": outcome.status,
            "format": "agentls stream-json events",
            "events": outcome.events,
        }
        write_atomically(
            self.trajectories / f"{outcome.id}.json",
            json.dumps(trajectory, ensure_ascii=False, indent=1),
        )

    def model_of(self, task_id: str) -> str:
        """The model the task's last trajectory names."""
        try:
            events = json.loads((self.trajectories / f"{task_id}.json").read_text())["events"]
        except (OSError, ValueError, KeyError, TypeError):
            return "agentls"
        for event in reversed(events):
            if event.get("type") == "usage" and event.get("model"):
                return f"agentls/{event['model']}"
        return "agentls"

    def predictions(self, tasks: list[Task], journal: Journal) -> int:
        """`preds.jsonl`: each task whose last attempt ended with a patch, as SWE-bench's
        harness reads it. Returns how many."""
        latest = journal.latest()
        lines = []
        for task in tasks:
            line = latest.get(task.id)
            patch = self.patches / f"{task.id}.diff"
            if line is None or line["status"] not in FINAL or not line.get("branch"):
                continue
            if not patch.is_file():
                continue
            prediction = {
                "instance_id": task.id,
                "model_name_or_path": self.model_of(task.id),
                "model_patch": patch.read_text(encoding="utf-8"),
            }
            lines.append(json.dumps(prediction, ensure_ascii=False))
        write_atomically(self.out / "preds.jsonl", "".join(f"{line}\n" for line in lines))
        return len(lines)

    def summary(self, tasks: list[Task], journal: Journal) -> str:
        """`summary.md`: one row per task, its last attempt; the totals below."""
        latest = journal.latest()
        rows = [
            "| id | status | steps | tokens | cost | test | branch |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        counts: dict[str, int] = {}
        tokens, cost = 0, 0.0
        for task in tasks:
            line: dict[str, Any] = latest.get(task.id) or {"status": "not run"}
            status = line["status"]
            counts[status] = counts.get(status, 0) + 1
            tokens += line.get("tokens") or 0
            cost += line.get("cost") or 0.0
            test = "—" if line.get("test_exit") is None else str(line["test_exit"])
            price = "—" if line.get("cost") is None else f"${line['cost']:.4f}"
            rows.append(
                f"| {task.id} | {status} | {line.get('steps') or 0} | {line.get('tokens') or 0} "
                f"| {price} | {test} | {line.get('branch') or '—'} |"
            )
        totals = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        text = (
            f"# Batch {self.out.name}\n\n{len(tasks)} tasks: {totals}; {tokens} tokens, "
            f"${cost:.4f}.\n\n" + "\n".join(rows) + "\n"
        )
        write_atomically(self.out / "summary.md", text)
        return text
