"""The cost of a checkpoint: the workspace recorded in the shadow git repository, as the
loop does before every edit and bash step."""

from __future__ import annotations

import resource
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from agentls.history.checkpoints import ShadowRepository
from agentls.interfaces import CheckpointMark


@dataclass(frozen=True)
class CheckpointCost:
    files: int
    first_seconds: float
    seconds: list[float]
    """Each checkpoint after the first, one file changed before each (an edit step)."""
    cpu_seconds: list[float]
    """The same, in CPU time (ours and git's), which a busy machine disturbs far less."""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu_seconds)


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def make_workspace(root: Path, files: int) -> None:
    """`files` small source files in 50 folders, and a .gitignore, like a mid-sized project."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for number in range(files - 1):
        folder = root / f"package{number % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module{number}.py").write_text(f"VALUE = {number}\n" * 40)


def checkpoint_cost(home: Path, files: int, rounds: int) -> CheckpointCost:
    root = home / "checkpointed"
    make_workspace(root, files)
    repository = ShadowRepository(root, home / "shadow")
    started = time.perf_counter()
    repository.record(
        CheckpointMark(kind="task", session="bench", task=1, step=None, label="first")
    )
    first = time.perf_counter() - started
    seconds, cpu_seconds = [], []
    for step in range(rounds):
        (root / f"package{step % 50}" / f"module{step}.py").write_text(f"VALUE = -{step}\n")
        started, cpu = time.perf_counter(), _cpu()
        repository.record(
            CheckpointMark(kind="step", session="bench", task=1, step=step, label="edit_file")
        )
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(_cpu() - cpu)
    return CheckpointCost(files, first, seconds, cpu_seconds)
