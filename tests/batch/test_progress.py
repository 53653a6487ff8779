"""The batch's progress on a terminal names the tasks running (issue 40, row 9)."""

from __future__ import annotations

import io

from agentls.batch.progress import BatchProgress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_names_the_tasks_running() -> None:
    progress = BatchProgress(5, _Terminal())
    assert progress.bar is not None
    for task_id in ("alpha", "beta", "gamma", "delta"):
        progress.started(task_id)
    (bar,) = progress.bar.tasks
    assert bar.description.endswith(
        "4 running · 1 left · 0 tokens · $0.0000 · running alpha, beta, gamma +1"
    )
    progress.ended("beta", "cancelled", 10, None, "")
    (bar,) = progress.bar.tasks
    assert "1 cancelled · 3 running" in bar.description
    assert bar.description.endswith("running alpha, gamma, delta")
    assert bar.completed == 1
