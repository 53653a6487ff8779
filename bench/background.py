"""Background tasks: what starting one costs on a big repository, as the editor waits for it
(`agent.runInBackground` answers once the base is taken and the task's process started: the
base is HEAD with the user's uncommitted changes, in a temporary index), and, for the record,
how long until the task's model is first asked (its process, worktree and agent)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentls.background import control, records

from .api import FakeAnthropic, reply, text
from .batch import environ, make_repository

PROMPT = "background task {n}: answer."


@dataclass(frozen=True)
class BackgroundStart:
    files: int
    answers: list[float]
    """Seconds each start took to answer (the editor's wait)."""
    first_requests: list[float]
    """Seconds from each start to its task's first request to the model."""

    @property
    def answer(self) -> float:
        return statistics.median(self.answers)

    @property
    def first_request(self) -> float:
        return statistics.median(self.first_requests)


def _wait_for(fake: FakeAnthropic, prompt: str, timeout: float = 120) -> float:
    """When the first request with `prompt` arrived (the fake's clock)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for request in fake.requests:
            if prompt in str(request.body.get("messages", "")):
                return request.received
        time.sleep(0.02)
    raise RuntimeError(f"the background task {prompt!r} never asked the model")


def background_start(
    home: Path, env: Mapping[str, str], files: int, starts: int = 3
) -> BackgroundStart:
    root = make_repository(home / "repo", files)
    # What the user has not committed: a change, a new file.
    (root / "app.py").write_text("x = 1  # not committed\n")
    (root / "notes.md").write_text("# untracked\n")
    answers, firsts = [], []
    with FakeAnthropic() as fake, environ({**env, "ANTHROPIC_BASE_URL": fake.url}):
        for n in range(starts):
            prompt = PROMPT.format(n=n)
            fake.script_for(prompt, reply(text("Done.")))
            started = time.monotonic()
            entry = control.start(root, prompt, prompt, control.Options())
            answers.append(time.monotonic() - started)
            firsts.append(_wait_for(fake, prompt) - started)
            _wait_ended(root, entry.record.id)
            control.discard(root, entry.record.id)
    return BackgroundStart(files, answers, firsts)


def _wait_ended(root: Path, task_id: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entry = records.find(root.resolve(), task_id)
        if entry is not None and entry.status.status not in records.ACTIVE:
            return
        time.sleep(0.05)
    raise RuntimeError(f"the background task {task_id} did not end")
