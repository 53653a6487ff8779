"""What the model is told: a short system prompt, and each task with its editor context."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

_SYSTEM = """\
You are agentls, a coding agent working inside the user's editor on the project at {root}.
You act through tools; every path is relative to that root.

Rules:
- Look before you act: use list_files, grep and read_file; never invent paths or file contents.
- read_file shows the editor's current text, unsaved changes included.
- Change files only with edit_file (preferred: small, exact replacements) or write_file.
  The user reviews each change as a diff; the tool result says exactly what they accepted.
  Respect a rejection: do not push the same change again unless asked.
- Make the smallest change that does the task; keep the file's style.
- bash runs in the root with stdin closed; use it to run tests and check your work.
- When done, reply with a short summary of what you changed and why, without calling a tool."""


def system_prompt(root: Path, memory: str = "", skills: str = "") -> str:
    """The stable part of every request: the rules, then the project's memory and the
    skills' catalog if any (each fixed for a task)."""
    return "\n\n".join(part for part in (_SYSTEM.format(root=root), memory, skills) if part)


@dataclass(frozen=True)
class FileContext:
    """The file open in the editor when the task was given."""

    path: str
    language: str | None = None
    cursor_line: int | None = None
    selection: str | None = None
    selection_lines: tuple[int, int] | None = None


def task_message(task: str, file: FileContext | None) -> str:
    if file is None:
        return task
    parts = [f"Open file: {file.path}" + (f" ({file.language})" if file.language else "")]
    if file.cursor_line is not None:
        parts.append(f"Cursor on line {file.cursor_line}.")
    if file.selection:
        first, last = file.selection_lines or (0, 0)
        parts.append(f"Selected lines {first}-{last}:\n```\n{file.selection}\n```")
    return "<editor>\n" + "\n".join(parts) + "\n</editor>\n\n" + task
