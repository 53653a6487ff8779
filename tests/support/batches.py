"""What the batch tests share: a repository, a tasks file, the scripted model of each task
(picked by its prompt), and `agentls batch` run in this process or as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fake_api import FakeAnthropic, Turn, hang, reply, text, tool_use

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def make_repository(folder: Path) -> Path:
    """A repository whose app.py holds `x = 0`, one commit."""
    folder.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q"], cwd=folder, check=True)
    (folder / "app.py").write_text("x = 0\n")
    subprocess.run([*GIT, "add", "."], cwd=folder, check=True)
    subprocess.run([*GIT, "commit", "-qm", "start"], cwd=folder, check=True)
    return folder


def prompt(task_id: str) -> str:
    return f"Set x to the number of task {task_id}."


def write_tasks(path: Path, ids: list[str], **extra: Any) -> Path:
    lines = [
        json.dumps({"id": i, "repo": "repo", "prompt": prompt(i), **extra}) + "\n" for i in ids
    ]
    path.write_text("".join(lines))
    return path


def edit_turns(task_id: str, value: str) -> list[Turn]:
    """The scripted task: edit app.py to `x = <value>`, then say it is done."""
    edit = {"path": "app.py", "old_text": "x = 0", "new_text": f"x = {value}"}
    return [reply(tool_use("edit_file", edit)), reply(text(f"Task {task_id} done."))]


def script_edits(fake: FakeAnthropic, ids: list[str], first: Turn | None = None) -> None:
    """Each task edits x to its own number; `first` (a hang) before one task's edit."""
    for number, task_id in enumerate(ids, start=1):
        fake.script_for(prompt(task_id), *edit_turns(task_id, str(number)))


def hanging(seconds: float = 120) -> Turn:
    """A first turn that holds the task (until its worker dies, or it is cancelled)."""
    return hang(seconds)


def environment(fake: FakeAnthropic, home: Path) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "XDG_CONFIG_HOME": str(home / "config"),
        "NO_COLOR": "1",
    }


def start_batch(folder: Path, env: dict[str, str], *arguments: str) -> subprocess.Popen[str]:
    """`agentls batch tasks.jsonl -o out ARGUMENTS` as a process of its own, in `folder`."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentls", "batch", "tasks.jsonl", "-o", "out", *arguments],
        cwd=folder,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def journal(folder: Path) -> list[dict[str, Any]]:
    path = folder / "out" / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(condition: Callable[[], bool], seconds: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        time.sleep(0.05)


def asked(fake: FakeAnthropic, task_id: str) -> int:
    """How many requests the fake had for the task."""
    wanted = prompt(task_id)
    return sum(1 for r in fake.requests if wanted in json.dumps(r.body["messages"][:1]))


def _children(pid: int) -> list[tuple[int, bytes]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == pid:
            found.append((int(entry.name), cmdline))
    return found


def templates_of(pid: int) -> list[int]:
    """The pids of the workers' template processes the batch driver `pid` started."""
    return [child for child, line in _children(pid) if b"agentls.batch.forkserver" in line]


def workers_of(pid: int) -> list[int]:
    """The pids of the batch worker processes `pid` started (forked by its template)."""
    return [worker for template in templates_of(pid) for worker, _ in _children(template)]


def branches(repository: Path) -> dict[str, str]:
    """Each agentls branch of the repository and its app.py."""
    listed = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname:short)", "refs/heads/agentls/"],
        cwd=repository,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {
        name: subprocess.run(
            ["git", "show", f"{name}:app.py"], cwd=repository, capture_output=True, text=True
        ).stdout
        for name in listed
    }


def worktrees(repository: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "worktree", "list", "--porcelain"],
        cwd=repository,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split(" ", 1)[1] for line in listed.splitlines() if line.startswith("worktree ")]
