"""list_files and grep: finding things in the workspace with ripgrep, `.gitignore` honoured.

ripgrep is the `rg` of the `ripgrep` wheel (beside the interpreter), else the one on PATH.
Where neither exists, a slower pure-Python search stands in, and the answer says so once.
What ripgrep reads is the disk; documents the editor holds with unsaved changes are searched
in their editor text instead, and a file whose lines hold a secret is searched again with the
secret redacted, so that a pattern can never tell what a secret holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...counts import counted
from ...disk import safe_git
from ...disk.files import NotText, read_text
from ...disk.paths import inside, relative, resolve
from ...edits import text_lines
from ...redaction import MIN_SHORT_SECRET, redact
from ..base import BeforeChange, Tool, ToolContext, ToolError
from . import ripgrep
from .hidden import Hidden, rg_exclusions
from .results import MAX_FILES, MAX_MATCHES, Found, Output

if TYPE_CHECKING:
    import regex

GREP_SECONDS = 10.0
"""The bound of one grep or list_files step; past it the answer is what was found so far."""
MAX_CONTEXT = 10
_SKIPPED_DIRS = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox")
_FALLBACK_NOTE = (
    "(ripgrep was not found, so this was searched in Python: slower, and the pattern is read "
    "as a Python `regex` pattern)"
)
_RG_LINE = re.compile(rb"(\d+)([:-])")


def _filters(glob: str | None, hidden: Hidden) -> list[str]:
    """What rg searches: hidden files too, the user's glob, never VCS metadata, vendored
    packages or caches, nor what a Read rule denies or asks for (globs given later win over
    earlier ones)."""
    arguments = ["--hidden", "--no-messages"]
    if glob:
        arguments += ["--glob", glob]
    for name in _SKIPPED_DIRS:
        arguments += ["--iglob", f"!{name}"]
    return arguments + rg_exclusions(hidden.rules)


def _hidden(context: ToolContext, path: str) -> Hidden:
    """What a search in `path` leaves out: what the Read rules hold, but for a rule that
    holds `path` itself, which was asked already (a deny rule refused the search)."""
    root = context.workspace.root
    rules = context.gate().unreadable()
    return Hidden(
        root, tuple(r for r in rules if not r.matches("read_file", {"path": path}, root, "ask"))
    )


def _target(context: ToolContext, path: str) -> tuple[Path, str]:
    """The folder or file to search, and how rg is to name it (relative to the root)."""
    root = context.workspace.root
    target = resolve(root, path)
    if not target.exists():
        raise ToolError(f"{path} does not exist")
    return target, _rg_path(relative(root, target))


def _rg_path(name: str) -> str:
    """A path relative to the root as rg is given it, so that it names files `./name`."""
    return "./" if name == "." else f"./{name}"


def _name(raw: bytes) -> str:
    """A path rg printed, as the OS names it (bytes that are not UTF-8 kept as surrogates,
    which tool results show escaped)."""
    name = os.fsdecode(raw)
    return name[2:] if name.startswith("./") else name


def _bound_note(found: str) -> str:
    return (
        f"[stopped at the {GREP_SECONDS:g} s bound before every file was searched: {found} "
        "so far; narrow the path or glob]"
    )


# list_files


async def _rg_files(executable: str, root: Path, arguments: list[str]) -> tuple[list[str], bool]:
    """The files rg lists, and whether it listed them all within the bound."""
    deadline = time.monotonic() + GREP_SECONDS
    data = bytearray()
    try:
        async with contextlib.aclosing(
            ripgrep.output(executable, ["--files", "--null", *arguments], root, deadline)
        ) as chunks:
            async for chunk in chunks:
                data += chunk
    except ripgrep.DeadlineReached:
        names = bytes(data).split(b"\0")[:-1]  # the last may be cut short
        return [_name(raw) for raw in names], False
    except ripgrep.RipgrepError as error:
        raise ToolError(str(error)) from None
    return [_name(raw) for raw in bytes(data).split(b"\0") if raw], True


async def list_files(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    root = context.workspace.root
    target, name = _target(context, arguments.get("path", "."))
    glob = arguments.get("glob")
    executable = ripgrep.binary()
    hidden = _hidden(context, arguments.get("path", "."))
    notes = []
    if executable is None:
        notes.append(_FALLBACK_NOTE)
        names, complete = await _python_files(context, target, glob), True
    else:
        listing = [*_filters(glob, hidden), "--", name]
        names, complete = await _rg_files(executable, root, listing)
    names = hidden.kept(names)
    names.sort()
    if not names and complete:
        return "\n".join([*notes, f"No files under {relative(root, target)}."])
    shown = names[:MAX_FILES]
    if not complete:
        shown.append(_bound_note(f"{len(names)} files"))
    elif len(names) > MAX_FILES:
        shown.append(
            f"[{len(names)} files; the first {MAX_FILES} shown. List a subfolder or give a glob]"
        )
    return "\n".join([*notes, *shown])


# grep


def _secret_marks(secrets: tuple[str, ...]) -> tuple[bytes, ...]:
    """What marks a line as holding (part of) a secret: the secret, or each line of a
    multi-line one, anywhere in it (a superset of where `redact` redacts)."""
    marks = set()
    for secret in secrets:
        for part in secret.replace("\r", "").split("\n"):
            if len(part) >= MIN_SHORT_SECRET:
                marks.add(part.encode("utf-8", "surrogateescape"))
    return tuple(marks)


class _Search:
    """One grep: rg over the disk, then again over the texts it must not show as they are."""

    def __init__(
        self, context: ToolContext, executable: str, arguments: dict[str, Any], found: Found
    ) -> None:
        self.context = context
        self.executable = executable
        self.found = found
        self.deadline = time.monotonic() + GREP_SECONDS
        self.marks = _secret_marks(context.secrets)
        self.hidden = _hidden(context, arguments.get("path", "."))
        self.again: set[str] = set()
        """Files to search again in their redacted or unsaved text."""
        flags = ["--line-number", "--color", "never", "--crlf"]
        if arguments.get("output") == "files":
            # A file's first matching line tells; if it holds a secret, the file is searched
            # again, redacted, like any other.
            flags += ["--max-count", "1"]
        if arguments.get("ignore_case"):
            flags.append("--ignore-case")
        if arguments.get("context"):
            flags += ["--context", str(arguments["context"])]
        self.flags = [*flags, "--regexp", arguments["pattern"]]

    async def disk(self, filters: list[str], name: str, unsaved: Iterable[str]) -> None:
        """Search the files on disk, leaving out those whose text the editor holds unsaved."""
        skip = set(unsaved)
        pending = b""
        arguments = [*self.flags, "--with-filename", "--null", "--no-heading", *filters]
        async with contextlib.aclosing(
            ripgrep.output(
                self.executable,
                [*arguments, "--", name],
                self.context.workspace.root,
                self.deadline,
            )
        ) as chunks:
            async for chunk in chunks:
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                self._disk_lines(lines, skip)
        self._disk_lines([pending], skip)

    def _disk_lines(self, lines: list[bytes], skip: set[str]) -> None:
        """rg's `path NUL number:text` lines (`-` for context) into what was found.

        Run for every line rg prints, tens of thousands a step: each file's name is decoded
        once for its run of lines, and a line's text only where it is kept.
        """
        found, marks, again, match = self.found, self.marks, self.again, _RG_LINE.match
        last_raw, path, hidden = None, "", False
        for line in lines:
            raw, separator, rest = line.partition(b"\0")
            numbered = match(rest) if separator else None
            if numbered is None:
                continue  # the `--` between context groups, or a file name with a line break
            if raw != last_raw:
                last_raw, path = raw, _name(raw)
                hidden = self.hidden.hides(path)
            if hidden or path in skip or path in again:
                continue
            text = rest[numbered.end() :]
            if marks and any(mark in text for mark in marks):
                again.add(path)
                found.forget(path)
                continue
            found.add(path, int(numbered.group(1)), numbered.group(2) == b":", text)

    async def text(self, path: str, text: str) -> None:
        """Search `text` as the file `path` holds it, through rg's standard input."""
        data = redact(text, self.context.secrets).encode("utf-8", "surrogateescape")
        pending = b""
        async with contextlib.aclosing(
            ripgrep.output(
                self.executable,
                [*self.flags, "--no-filename", "-"],
                self.context.workspace.root,
                self.deadline,
                stdin=data,
            )
        ) as chunks:
            async for chunk in chunks:
                pending += chunk
        for line in pending.split(b"\n"):
            numbered = _RG_LINE.match(line)
            if numbered is not None:
                self.found.add(
                    path, int(numbered.group(1)), numbered.group(2) == b":", line[numbered.end() :]
                )


async def _unsaved(
    context: ToolContext, executable: str, target: Path, filters: list[str]
) -> dict[str, str]:
    """The documents under `target` the editor holds with unsaved changes that rg would
    search, by the names rg gives them, with their editor text."""
    root = context.workspace.root
    changed: dict[Path, str] = {}
    for path, text in context.workspace.open_documents().items():
        if not (path == target or path.is_relative_to(target)):
            continue
        with contextlib.suppress(OSError, NotText):
            if await asyncio.to_thread(read_text, root, path) != text:
                changed[path] = text
    if not changed:
        return {}
    # Whether rg would search each: its folder listed one level deep, with the same filters
    # (an ignored folder above it is not seen this way).
    folders = sorted({_rg_path(relative(root, path.parent)) for path in changed})
    names, _ = await _rg_files(executable, root, [*filters, "--max-depth", "1", "--", *folders])
    searched = set(names)
    return {
        name: text
        for path, text in changed.items()
        if (name := relative(root, path)) in searched
        and not any(part in _SKIPPED_DIRS for part in name.split("/"))
    }


async def _rg_grep(
    context: ToolContext, executable: str, arguments: dict[str, Any], found: Found
) -> bool:
    """Search with rg; whether every file was searched within the bound."""
    target, name = _target(context, arguments.get("path", "."))
    search = _Search(context, executable, arguments, found)
    filters = _filters(arguments.get("glob"), search.hidden)
    try:
        unsaved = await _unsaved(context, executable, target, filters)
        await search.disk(filters, name, unsaved)
        for path in sorted(search.again - unsaved.keys()):
            with contextlib.suppress(OSError, NotText):
                unsaved[path] = await context.workspace.read_text(context.workspace.root / path)
        for path, text in sorted(unsaved.items()):
            if not search.hidden.hides(path):
                await search.text(path, text)
    except ripgrep.DeadlineReached:
        return False
    except ripgrep.RipgrepError as error:
        raise ToolError(str(error)) from None
    return True


def _check_output(value: Any) -> Output:
    if value not in ("content", "files", "count"):
        raise ToolError('grep: output must be "content", "files" or "count"')
    return cast(Output, value)


async def grep(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    output = _check_output(arguments.get("output", "content"))
    lines = arguments.get("context", 0)
    if lines > MAX_CONTEXT:
        raise ToolError(f"grep: context is at most {MAX_CONTEXT} lines")
    found = Found()
    executable = ripgrep.binary()
    notes = []
    if executable is None:
        notes.append(_FALLBACK_NOTE)
        complete = await _python_grep(context, arguments, found)
    else:
        complete = await _rg_grep(context, executable, arguments, found)
    shown, cut = found.render(output, separate_groups=bool(lines))
    total, files = found.total, len(found.counts)
    summary = f"{files} file" + ("" if files == 1 else "s")
    if output != "files":
        summary = f"{total} {'match' if total == 1 else 'matches'} in {summary}"
    if not complete:
        shown.append(_bound_note(summary))
    elif cut:
        what = f"the first {MAX_MATCHES} matches" if output == "content" else f"{MAX_FILES} files"
        shown.append(f"[{summary}; {what} shown. Narrow the pattern, path or glob]")
    elif output == "count" and shown:
        shown.append(f"[{summary}]")
    if not shown:
        shown.append("No matches.")
    return "\n".join([*notes, *shown])


# The pure-Python fallback, where there is no rg.


async def _git_files(root: Path, folder: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under `folder`, or None outside a git repo."""
    try:
        arguments = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        process = await safe_git.start(
            [*arguments, "--", str(folder)],
            root,
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


async def _files(context: ToolContext, folder: Path) -> list[Path]:
    root = context.workspace.root
    if folder.is_file():
        return [folder]
    files = await _git_files(root, folder)
    if files is None:
        files = await asyncio.to_thread(_walked_files, folder)
    # A symlink in the tree may point out of it; git's metadata is never listed.
    real_root = root.resolve()
    return [
        file
        for file in files
        if inside(real_root, file) and ".git" not in relative(root, file).split("/")
    ]


async def _python_files(context: ToolContext, target: Path, glob: str | None) -> list[str]:
    root = context.workspace.root
    names = [relative(root, path) for path in await _files(context, target)]
    hidden = _hidden(context, relative(root, target))
    return hidden.kept([name for name in names if _glob_matches(name, glob)])


def _glob_matches(name: str, glob: str | None) -> bool:
    return not glob or fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(name.rsplit("/", 1)[-1], glob)


def _search_lines(
    pattern: regex.Pattern[str], text: str, around: int, deadline: float
) -> list[tuple[int, bool, str]]:
    """Matching lines and `around` lines of context, numbered as read_file numbers them;
    TimeoutError past `deadline`.

    Run in a thread: the regex module releases the GIL (`concurrent`) and honours a timeout,
    so a pattern that backtracks without end cannot freeze the server.
    """
    lines = text_lines(text)
    matching: list[int] = [
        number
        for number, line in enumerate(lines, 1)
        if pattern.search(line, timeout=max(deadline - time.monotonic(), 0.001), concurrent=True)
    ]
    shown: dict[int, bool] = {}
    for number in matching:
        for near in range(max(number - around, 1), min(number + around, len(lines)) + 1):
            shown.setdefault(near, False)
        shown[number] = True
    return [(number, shown[number], lines[number - 1]) for number in sorted(shown)]


async def _python_grep(context: ToolContext, arguments: dict[str, Any], found: Found) -> bool:
    import regex  # imported on first use: it is a third of the server's own start-up

    flags = regex.IGNORECASE if arguments.get("ignore_case") else 0
    try:
        pattern = regex.compile(arguments["pattern"], flags)
    except regex.error as error:
        raise ToolError(f"invalid regular expression: {error}") from None
    deadline = time.monotonic() + GREP_SECONDS
    root = context.workspace.root
    target, _ = _target(context, arguments.get("path", "."))
    for name in await _python_files(context, target, arguments.get("glob")):
        try:
            text = await context.workspace.read_text(root / name)
        except (OSError, NotText):
            continue
        try:
            lines = await asyncio.to_thread(
                _search_lines,
                pattern,
                redact(text, context.secrets),
                arguments.get("context", 0),
                deadline,
            )
        except TimeoutError:
            return False
        for number, is_match, line in lines:
            found.add(name, number, is_match, line)
    return True


_PATH_ARGUMENT = {"type": "string", "description": "Folder or file; default the root."}
_GLOB = {"type": "string", "description": "Only files matching this glob, e.g. '*.py'."}


def _listed_words(arguments: dict[str, Any], result: str) -> tuple[bool, str]:
    """`12 files`, counted from the answer's lines (its notes in brackets are not files)."""
    total = re.search(r"^\[(\d+) files", result, re.MULTILINE)
    if result.rpartition("\n")[2].startswith("No files under"):
        return True, "no files"
    names = [line for line in result.splitlines() if line and line[0] not in "[("]
    return True, counted(int(total.group(1)) if total else len(names), "file")


def _grep_words(arguments: dict[str, Any], result: str) -> tuple[bool, str]:
    """`2 files match`, `no match`: the files the answer names."""
    if result.endswith("No matches."):
        return True, "no match"
    summary = re.search(r"^\[(?:(\d+) match(?:es)? in )?(\d+) files?[;\]]", result, re.MULTILINE)
    if summary:
        files = int(summary.group(2))
    else:
        lines = [line for line in result.splitlines() if line and line != "--" and line[0] != "("]
        output = arguments.get("output", "content")
        if output == "files":
            files = len(lines)
        else:
            marks = ": " if output == "count" else ":"
            files = len({line.partition(marks)[0] for line in lines if marks in line})
    return True, f"{counted(files, 'file')} match" if files != 1 else "1 file matches"


LIST_FILES = Tool(
    name="list_files",
    description="List the files under a folder (recursively; .gitignore'd files left out), sorted.",
    properties={"path": _PATH_ARGUMENT, "glob": _GLOB},
    required=(),
    handler=list_files,
    read_only=True,
    summary_field="path",
    words=_listed_words,
)

GREP = Tool(
    name="grep",
    description=(
        "Search file contents with a regular expression (ripgrep's syntax); answers "
        "'path:line: text' sorted by path, context lines as 'path-line- text'."
    ),
    properties={
        "pattern": {"type": "string", "description": "Regular expression."},
        "path": _PATH_ARGUMENT,
        "glob": _GLOB,
        "ignore_case": {"type": "boolean", "description": "Case-insensitive."},
        "context": {"type": "integer", "minimum": 0, "description": "Lines around each match."},
        "output": {
            "type": "string",
            "enum": ["content", "files", "count"],
            "description": "Matching lines (default), file names, or counts per file.",
        },
    },
    required=("pattern",),
    handler=grep,
    read_only=True,
    summary_field="pattern",
    words=_grep_words,
)
