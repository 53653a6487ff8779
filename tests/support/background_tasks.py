"""What the background task tests share: a repository as the workspace, a gate that holds a
scripted turn until the test lets it go, and waiting for a task to reach a state."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fake_api import Turn

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def git(root: Path, *arguments: str) -> str:
    done = subprocess.run([*GIT, *arguments], cwd=root, check=True, capture_output=True)
    return done.stdout.decode()


def make_repository(root: Path, files: dict[str, str]) -> Path:
    """`root` as a git repository whose one commit holds `files`."""
    git(root, "init", "-q")
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


def gated(gate: threading.Event, then: Turn) -> Callable[[Any], Turn]:
    """A turn that waits (in the fake's thread) until the test sets `gate`."""

    def wait(body: Any) -> Turn:
        gate.wait(120)
        return then

    return wait


async def wait_for_status(
    list_tasks: Callable[[], Any], task_id: str, wanted: set[str], timeout: float = 90
) -> dict[str, Any]:
    """Poll the task list until task `task_id` is in one of `wanted`; its item."""
    deadline = asyncio.get_running_loop().time() + timeout
    item: dict[str, Any] = {}
    while asyncio.get_running_loop().time() < deadline:
        listed = await list_tasks()
        item = next((i for i in listed if i["id"] == task_id), {})
        if item.get("status") in wanted:
            return item
        await asyncio.sleep(0.2)
    raise AssertionError(f"task {task_id} never reached {wanted}: {item}")
