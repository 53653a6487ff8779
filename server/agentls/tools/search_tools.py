"""list_files and grep: finding things in the workspace, honouring .gitignore where git can."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from pathlib import Path
from typing import Any

from ..environment import redact, scrubbed
from ..files import NotText
from ..paths import inside, relative, resolve
from .base import Tool, ToolContext, ToolError

MAX_FILES = 1000
MAX_MATCHES = 200
MATCH_CHARS = 300
_SKIPPED_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}


async def _git_files(root: Path, folder: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under `folder`, or None outside a git repo."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            str(folder),
            cwd=root,
            env=scrubbed(os.environ),
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
    found = []
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
    return folder, [file for file in files if inside(root, file)]


async def list_files(context: ToolContext, arguments: dict[str, Any]) -> str:
    root = context.workspace.root
    folder, files = await _files(context, arguments.get("path", "."))
    if not files:
        return f"No files under {relative(root, folder)}."
    names = [relative(root, path) for path in files[:MAX_FILES]]
    if len(files) > MAX_FILES:
        names.append(f"[{len(files) - MAX_FILES} more files; list a subfolder to see them]")
    return "\n".join(names)


async def grep(context: ToolContext, arguments: dict[str, Any]) -> str:
    try:
        pattern = re.compile(arguments["pattern"])
    except re.error as error:
        raise ToolError(f"invalid regular expression: {error}") from None
    root = context.workspace.root
    _, files = await _files(context, arguments.get("path", "."))
    glob = arguments.get("glob")
    matches: list[str] = []
    for index, path in enumerate(files):
        name = relative(root, path)
        if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(path.name, glob)):
            continue
        if index % 50 == 0:
            await asyncio.sleep(0)  # stay cancellable on a large tree
        try:
            text = await context.workspace.read_text(path)
        except (OSError, NotText):
            continue
        for number, line in enumerate(redact(text, context.secrets).splitlines(), 1):
            if pattern.search(line):
                if len(line) > MATCH_CHARS:
                    line = line[:MATCH_CHARS] + " [...]"
                matches.append(f"{name}:{number}: {line}")
                if len(matches) > MAX_MATCHES:
                    matches[-1] = f"[more than {MAX_MATCHES} matches; narrow the pattern or path]"
                    return "\n".join(matches)
    return "\n".join(matches) if matches else "No matches."


LIST_FILES = Tool(
    "list_files",
    "List the files under a folder of the workspace (recursively; .gitignore'd files left out).",
    {"path": {"type": "string", "description": "Folder relative to the root; default the root."}},
    (),
    list_files,
    "path",
)

GREP = Tool(
    "grep",
    "Search file contents with a Python regular expression; answers 'path:line: text'.",
    {
        "pattern": {"type": "string", "description": "Regular expression."},
        "path": {"type": "string", "description": "Folder or file to search; default the root."},
        "glob": {"type": "string", "description": "Only files matching this glob, e.g. '*.py'."},
    },
    ("pattern",),
    grep,
    "pattern",
)
