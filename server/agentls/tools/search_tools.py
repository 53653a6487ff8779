"""list_files and grep: finding things in the workspace, honouring .gitignore where git can."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..edits import text_lines
from ..environment import redact
from ..files import NotText
from ..paths import inside, relative, resolve
from ..safe_git import safe_git_command, safe_git_env
from .base import Tool, ToolContext, ToolError

if TYPE_CHECKING:
    import regex

MAX_FILES = 1000
MAX_MATCHES = 200
MATCH_CHARS = 300
GREP_SECONDS = 10.0
_SKIPPED_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}


async def _git_files(root: Path, folder: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under `folder`, or None outside a git repo."""
    try:
        process = await asyncio.create_subprocess_exec(
            *safe_git_command(
                ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", str(folder)]
            ),
            cwd=root,
            env=safe_git_env(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except FileNotFoundError:
        return None
    output, _ = await process.communicate()
    if process.returncode != 0:
        return None
    names = dict.fromkeys(output.decode("utf-8", "replace").split("\0"))
    files = (root / name for name in names if name)
    # --cached also lists tracked files deleted from the disk.
    return sorted(path for path in files if path.is_file())


def _walked_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for directory, subdirectories, names in os.walk(folder):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRS)
        found.extend(Path(directory, name) for name in sorted(names))
    return found


async def _files(context: ToolContext, path: str) -> tuple[Path, list[Path]]:
    root = context.workspace.root
    folder = resolve(root, path)
    if folder.is_file():
        return folder, [folder]
    if not folder.is_dir():
        raise ToolError(f"{path} does not exist")
    files = await _git_files(root, folder)
    if files is None:
        files = await asyncio.to_thread(_walked_files, folder)
    # A symlink in the tree may point out of it.
    real_root = root.resolve()
    return folder, [file for file in files if inside(real_root, file)]


async def list_files(context: ToolContext, arguments: dict[str, Any]) -> str:
    root = context.workspace.root
    folder, files = await _files(context, arguments.get("path", "."))
    if not files:
        return f"No files under {relative(root, folder)}."
    names = [relative(root, path) for path in files[:MAX_FILES]]
    if len(files) > MAX_FILES:
        names.append(f"[{len(files) - MAX_FILES} more files; list a subfolder to see them]")
    return "\n".join(names)


def _search(pattern: regex.Pattern[str], text: str, deadline: float) -> list[tuple[int, str]]:
    """Matching lines, numbered as read_file numbers them; TimeoutError past `deadline`.

    Run in a thread: the regex module releases the GIL (`concurrent`) and honours a timeout,
    so a pattern that backtracks without end cannot freeze the server.
    """
    found = []
    for number, line in enumerate(text_lines(text), 1):
        if pattern.search(line, timeout=max(deadline - time.monotonic(), 0.001), concurrent=True):
            found.append((number, line))
            if len(found) > MAX_MATCHES:
                break
    return found


async def grep(context: ToolContext, arguments: dict[str, Any]) -> str:
    # Imported on first use: it is a third of the server's own start-up.
    import regex

    try:
        pattern = regex.compile(arguments["pattern"])
    except regex.error as error:
        raise ToolError(f"invalid regular expression: {error}") from None
    deadline = time.monotonic() + GREP_SECONDS
    root = context.workspace.root
    _, files = await _files(context, arguments.get("path", "."))
    glob = arguments.get("glob")
    matches: list[str] = []
    for path in files:
        name = relative(root, path)
        if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(path.name, glob)):
            continue
        try:
            text = await context.workspace.read_text(path)
        except (OSError, NotText):
            continue
        try:
            found = await asyncio.to_thread(
                _search, pattern, redact(text, context.secrets), deadline
            )
        except TimeoutError:
            raise ToolError(
                f"the search took over {GREP_SECONDS:g} s (a pattern that backtracks a lot?); "
                "simplify the pattern or narrow the path"
            ) from None
        for number, line in found:
            if len(line) > MATCH_CHARS:
                line = line[:MATCH_CHARS] + " [...]"
            matches.append(f"{name}:{number}: {line}")
            if len(matches) > MAX_MATCHES:
                matches[-1] = f"[more than {MAX_MATCHES} matches; narrow the pattern or path]"
                return "\n".join(matches)
    return "\n".join(matches) if matches else "No matches."


LIST_FILES = Tool(
    name="list_files",
    description=(
        "List the files under a folder of the workspace (recursively; .gitignore'd files left out)."
    ),
    properties={
        "path": {"type": "string", "description": "Folder relative to the root; default the root."}
    },
    required=(),
    handler=list_files,
    summary_field="path",
)

GREP = Tool(
    name="grep",
    description=(
        "Search file contents with a Python regular expression (the `regex` module, a "
        "superset of `re`); answers 'path:line: text'."
    ),
    properties={
        "pattern": {"type": "string", "description": "Regular expression."},
        "path": {"type": "string", "description": "Folder or file to search; default the root."},
        "glob": {"type": "string", "description": "Only files matching this glob, e.g. '*.py'."},
    },
    required=("pattern",),
    handler=grep,
    summary_field="pattern",
)
