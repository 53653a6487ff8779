"""The tasks file: one JSON object a line, checked whole before anything runs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIELDS = {"id", "repo", "prompt", "base", "setup", "test", "max_steps", "timeout"}
REQUIRED = ("id", "repo", "prompt")

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""An id names a branch (`agentls/<batch>/<id>`), a patch file and a worktree folder: no
slash, no `..`, nothing git refuses in a ref, nothing a shell or a path would read twice."""


@dataclass(frozen=True, kw_only=True)
class Task:
    id: str
    repo: str
    """An absolute path: a relative one is read from the tasks file's folder."""
    prompt: str
    base: str | None = None
    """A commit or a branch; None: the repository's HEAD."""
    setup: str | None = None
    test: str | None = None
    max_steps: int | None = None
    timeout: float | None = None
    line: int = 0


class TasksError(ValueError):
    """The file's problems, each naming its line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def valid_id(value: str) -> bool:
    return bool(_ID.fullmatch(value)) and ".." not in value and not value.endswith(".lock")


def parse_line(text: str, number: int, folder: Path) -> Task:
    """One line's task; raises ValueError saying what is wrong with it."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    missing = [name for name in REQUIRED if name not in raw]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    unknown = sorted(set(raw) - FIELDS)
    if unknown:  # a typo ("promt") would otherwise be a task run without what was meant
        raise ValueError(f"unknown field {', '.join(unknown)} (known: {', '.join(sorted(FIELDS))})")
    for name in ("id", "repo", "prompt", "base", "setup", "test"):
        value = raw.get(name)
        if name in raw and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{name} must be a non-empty string")
    if not valid_id(raw["id"]):
        raise ValueError(
            f"id {raw['id']!r}: letters, digits, '.', '_' and '-' only (it names a branch)"
        )
    return Task(
        id=raw["id"],
        repo=str((folder / raw["repo"]).resolve()) if "://" not in raw["repo"] else raw["repo"],
        prompt=raw["prompt"],
        base=raw.get("base"),
        setup=raw.get("setup"),
        test=raw.get("test"),
        max_steps=_positive(raw, "max_steps", int),
        timeout=_positive(raw, "timeout", float),
        line=number,
    )


def _positive(raw: dict[str, Any], name: str, kind: type[int] | type[float]) -> Any:
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a positive number")
    if kind is int and value != int(value):
        raise ValueError(f"{name} must be a whole number")
    return kind(value)


def read_tasks(path: Path) -> list[Task]:
    """Every task of the file; raises TasksError naming each bad line and each repeated id,
    so nothing runs from a file that is wrong anywhere. Blank lines are skipped."""
    problems: list[str] = []
    tasks: list[Task] = []
    first_line: dict[str, int] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise TasksError([f"{path}: cannot be read ({error})"]) from None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            task = parse_line(text, number, path.parent)
        except ValueError as error:
            problems.append(f"{path.name}:{number}: {error}")
            continue
        if task.id in first_line:
            problems.append(
                f"{path.name}:{number}: duplicate id {task.id!r} (first on line "
                f"{first_line[task.id]})"
            )
            continue
        first_line[task.id] = number
        tasks.append(task)
    if not tasks and not problems:
        problems.append(f"{path.name}: no task in the file")
    if problems:
        raise TasksError(problems)
    return tasks
