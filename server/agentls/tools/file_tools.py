"""read_file, write_file and edit_file: the editor's text in, proposed changes out."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from ..edits import Hunk, apply_hunks, line_hunks, text_lines
from ..environment import REDACTED, redact
from ..files import NotText
from ..interfaces import Change, Landed
from ..paths import relative, resolve
from .base import Tool, ToolContext, ToolError
from .review_outcome import describe, not_applied

READ_LINES = 2000
LINE_CHARS = 2000


async def _current_text(context: ToolContext, path: str) -> tuple[Path, str | None]:
    """The resolved path and its current text, or None if there is no such file."""
    target = resolve(context.workspace.root, path)
    try:
        return target, await context.workspace.read_text(target)
    except FileNotFoundError:
        return target, None
    except IsADirectoryError:
        raise ToolError(f"{path} is a directory; use list_files to see what it holds") from None
    except NotText as error:
        raise ToolError(str(error)) from None


async def read_file(context: ToolContext, arguments: dict[str, Any]) -> str:
    target, text = await _current_text(context, arguments["path"])
    name = relative(context.workspace.root, target)
    if text is None:
        raise ToolError(f"{name} does not exist; use list_files or grep to find the right path")
    if not text:
        return f"{name} is empty."
    # Before long lines are cut, so no part of a secret is left at a cut.
    lines = text_lines(redact(text, context.secrets))
    first = arguments.get("offset", 1)
    count = arguments.get("limit", READ_LINES)
    if first > len(lines):
        raise ToolError(f"offset {first} is past the end: {name} has {len(lines)} lines")
    shown: list[str] = []
    budget = context.settings.output_limit
    last = first - 1
    for number in range(first, min(first + count, len(lines) + 1)):
        line = lines[number - 1]
        if len(line) > LINE_CHARS:
            line = line[:LINE_CHARS] + f" [... {len(line) - LINE_CHARS} characters cut]"
        entry = f"{number}\t{line}"
        budget -= len(entry) + 1
        if budget < 0 and shown:
            break
        shown.append(entry)
        last = number
    if first > 1 or last < len(lines):
        shown.append(
            f"[lines {first}-{last} of {len(lines)}"
            + (f"; read on with offset={last + 1}]" if last < len(lines) else "]")
        )
    return "\n".join(shown)


def _match_line_endings(text: str, snippet: str) -> str:
    """`snippet` with the file's CRLF endings, since the model reads lines without them."""
    # Looking for a CR first: on a file without one, a far cheaper scan.
    if "\r" in text and "\r\n" in text:
        return snippet.replace("\r\n", "\n").replace("\n", "\r\n")
    return snippet


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _not_found(text: str, old_text: str, name: str) -> ToolError:
    wanted = next((line.strip() for line in old_text.splitlines() if line.strip()), old_text)
    lines = text_lines(text)
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(wanted, stripped, n=3, cutoff=0.6)
    hints = []
    for candidate in close:
        number = stripped.index(candidate) + 1
        hints.append(f"  line {number}: {lines[number - 1]}")
    message = f"old_text was not found in {name}."
    if REDACTED in old_text:
        message += f" {REDACTED} stands for a secret: choose old_text that leaves it out."
    if hints:
        message += " The most similar lines are:\n" + "\n".join(hints)
    return ToolError(message + "\nRead the file again and copy old_text exactly.")


def _replacement_hunks(text: str, start: int, end: int, new_text: str) -> list[Hunk]:
    """Hunks for replacing text[start:end], diffing only the lines it touches.

    Cheap on a big file: nothing outside those lines is split or compared.
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end + 1
    before = text[line_start:line_end]
    after = before[: start - line_start] + new_text + before[end - line_start :]
    base_line = _line_of(text, line_start) - 1
    return [
        Hunk(
            h.start + line_start,
            h.end + line_start,
            h.text,
            h.line + base_line,
            h.old_line_count,
            h.new_line_count,
        )
        for h in line_hunks(before, after)
    ]


async def edit_file(context: ToolContext, arguments: dict[str, Any]) -> str:
    target, text = await _current_text(context, arguments["path"])
    name = relative(context.workspace.root, target)
    if text is None:
        raise ToolError(f"{name} does not exist; create it with write_file")
    old_text, new_text = arguments["old_text"], arguments["new_text"]
    if not old_text:
        raise ToolError("old_text is empty; give the exact text to replace (or use write_file)")
    if old_text not in text:
        old_text = _match_line_endings(text, old_text)
    new_text = _match_line_endings(text, new_text)
    count = text.count(old_text)
    if count == 0:
        raise _not_found(text, arguments["old_text"], name)
    if old_text == new_text:
        raise ToolError("old_text and new_text are the same: nothing to change")
    if count > 1 and not arguments.get("replace_all", False):
        lines: list[str] = []
        at = text.find(old_text)
        while at != -1 and len(lines) < 20:
            lines.append(str(_line_of(text, at)))
            at = text.find(old_text, at + len(old_text))
        raise ToolError(
            f"old_text occurs {count} times in {name} (lines {', '.join(lines)}); include more "
            "surrounding lines to make it unique, or set replace_all to change every one"
        )
    if count == 1:
        start = text.index(old_text)
        hunks = _replacement_hunks(text, start, start + len(old_text), new_text)
    else:
        hunks = line_hunks(text, text.replace(old_text, new_text))
    return await propose(
        context, Change(target, text, apply_hunks(text, hunks), hunks, "edit_file")
    )


async def write_file(context: ToolContext, arguments: dict[str, Any]) -> str:
    target, text = await _current_text(context, arguments["path"])
    content = arguments["content"]
    if text is None:
        hunk = Hunk(0, 0, content, 1, 0, len(text_lines(content)))
        return await propose(context, Change(target, None, content, [hunk], "write_file"))
    content = _match_line_endings(text, content)
    if content == text:
        return f"{relative(context.workspace.root, target)} already has exactly this content."
    return await propose(
        context, Change(target, text, content, line_hunks(text, content), "write_file")
    )


def _check_no_redacted_secret_written_back(context: ToolContext, change: Change, name: str) -> None:
    """The model sees secrets as [redacted]; writing that back would destroy them."""
    old = change.old_text or ""
    # Counted in the hunks only: they hold whole lines, so no REDACTED straddles their ends.
    added = sum(h.text.count(REDACTED) - old.count(REDACTED, h.start, h.end) for h in change.hunks)
    if added > 0 and any(secret in old for secret in context.secrets):
        raise ToolError(
            f"{REDACTED} in the new text stands for a secret that {name} holds; writing it "
            "would destroy the secret. Edit around those lines with edit_file instead."
        )


async def propose(context: ToolContext, change: Change) -> str:
    """Put the change to the user and tell the model exactly what landed."""
    name = relative(context.workspace.root, change.path)
    _check_no_redacted_secret_written_back(context, change, name)
    outcome = await context.workspace.propose(change)
    if _nothing_landed(change, outcome):
        context.edits.rejected += 1
        raise ToolError(not_applied(change, outcome, name))
    context.edits.applied += 1
    return describe(change, outcome, name, context.secrets)


def _nothing_landed(change: Change, outcome: Landed) -> bool:
    if outcome.applied and outcome.text in (None, change.new_text):
        return False
    return not outcome.applied or outcome.text == (change.old_text or "")


_PATH = {"type": "string", "description": "Path relative to the workspace root."}

READ_FILE = Tool(
    name="read_file",
    description=(
        "Read a text file as the editor has it (unsaved changes included). Lines are "
        "numbered 'N<tab>text'; the numbers are not part of the file. "
        f"Reads up to {READ_LINES} lines; use offset and limit for more."
    ),
    properties={
        "path": _PATH,
        "offset": {"type": "integer", "minimum": 1, "description": "First line, from 1."},
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines."},
    },
    required=("path",),
    handler=read_file,
    summary_field="path",
)

WRITE_FILE = Tool(
    name="write_file",
    description=(
        "Create a file, or replace a whole file's content. The user reviews the change; the "
        "result says what they accepted. Prefer edit_file for changes to existing files."
    ),
    properties={
        "path": _PATH,
        "content": {"type": "string", "description": "The complete new content."},
    },
    required=("path", "content"),
    handler=write_file,
    summary_field="path",
)

EDIT_FILE = Tool(
    name="edit_file",
    description=(
        "Replace old_text with new_text in a file. old_text must match the file exactly "
        "(without the line numbers read_file shows) and occur once, unless replace_all is "
        "true. The user reviews the change; the result says what they accepted."
    ),
    properties={
        "path": _PATH,
        "old_text": {"type": "string", "description": "Exact text to replace."},
        "new_text": {"type": "string", "description": "Replacement text."},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
    },
    required=("path", "old_text", "new_text"),
    handler=edit_file,
    summary_field="path",
)
