"""read_file, write_file and edit_file: the editor's text in, proposed changes out."""

from __future__ import annotations

import asyncio
import difflib
import os
import re
from pathlib import Path
from typing import Any

from ..counts import counted
from ..disk import files
from ..disk.files import NotText, PathChanged
from ..disk.paths import refuse_git_metadata, relative, resolve
from ..edits import Hunk, apply_hunks, landed, line_hunks, text_lines
from ..images import is_image_name
from ..interfaces import Change, Landed, Workspace
from ..permissions.gate import Gate, Refusal, Request
from ..redaction import REDACTED, Redacted, redact, secret_spans
from .base import BeforeChange, Tool, ToolContext, ToolError
from .editor_tools import new_problems, problems_before
from .image_results import read_image
from .line_endings import CHOICES, converted, follow
from .review_outcome import describe, not_applied

READ_LINES = 2000
IMAGES_NOTE = "PNG, JPEG, GIF and WebP files come back as the image."
LINE_CHARS = 2000


async def _current_text(
    context: ToolContext, path: str, writing: bool = False
) -> tuple[Path, str | None]:
    """The resolved path and its current text, or None if there is no such file."""
    in_skill = None if writing else _in_loaded_skill(context, path)
    if in_skill is not None:
        folder, target = in_skill
        try:  # from the skill's folder down, through no link
            return target, await asyncio.to_thread(files.read_text, folder, target)
        except FileNotFoundError:
            return target, None
        except (IsADirectoryError, NotText, OSError) as error:
            raise ToolError(f"{path} cannot be read: {error}") from None
    target = resolve(context.workspace.root, path)
    if writing:
        refuse_git_metadata(context.workspace.root, target)
    try:
        return target, await context.workspace.read_text(target)
    except FileNotFoundError:
        return target, None
    except IsADirectoryError:
        raise ToolError(f"{path} is a directory; use list_files to see what it holds") from None
    except (NotText, PathChanged) as error:
        raise ToolError(str(error)) from None


def _in_loaded_skill(context: ToolContext, path: str) -> tuple[Path, Path] | None:
    """(the skill's folder, the file) for an absolute path into the folder of a skill loaded
    in this task outside the workspace (a user's skill): read, never written, unasked."""
    if not path.startswith(("/", "~")):
        return None
    target = Path(os.path.normpath(Path(path).expanduser()))  # no `..` out of the folder
    for folder in context.skills.folders:
        if target.is_relative_to(folder) and not folder.is_relative_to(context.workspace.root):
            return folder, target
    return None


async def read_file(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    if is_image_name(arguments["path"]):  # the image itself, for a vision model
        return await read_image(context, arguments)
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
    if hints:
        message += " The most similar lines are:\n" + "\n".join(hints)
    return ToolError(message + "\nRead the file again and copy old_text exactly.")


def _ending_before(text: str, offset: int) -> str:
    """The line ending just before `offset`, a line's start ("" at the file's start)."""
    return "\r\n" if text.startswith("\r\n", offset - 2) else "\n" if offset else ""


def _replacement_hunks(
    text: str, spans: list[tuple[int, int]], new_text: str
) -> tuple[list[Hunk], int]:
    """Hunks for replacing each text[start:end] of `spans` (in order, apart) with `new_text`,
    its lines ending as the lines they replace (`line_endings.follow`); and how many of the
    model's LF endings became CRLF so.

    Linear in the file: the lines the replacements touch are grouped (touching lines
    together) and only each group is diffed, so a replace_all over a big file stays cheap.
    """
    groups: list[tuple[int, int, list[tuple[int, int]]]] = []
    for start, end in spans:
        if groups and end <= groups[-1][1]:
            groups[-1][2].append((start, end))  # within lines already taken
            continue
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end == -1 else line_end + 1
        if groups and line_start <= groups[-1][1]:  # on the next line: the same hunk
            group_start, _, members = groups[-1]
            members.append((start, end))
            groups[-1] = (group_start, line_end, members)
        else:
            groups.append((line_start, line_end, [(start, end)]))
    hunks: list[Hunk] = []
    kept = 0
    line, counted = 1, 0
    for group_start, group_end, members in groups:
        line += text.count("\n", counted, group_start)
        counted = group_start
        pieces: list[tuple[str, bool]] = []
        position = group_start
        for start, end in members:
            pieces += [(text[position:start], False), (new_text, True)]
            position = end
        pieces.append((text[position:group_end], False))
        old = text[group_start:group_end]
        new, crlf = follow(old, pieces, _ending_before(text, group_start))
        kept += crlf
        hunks.extend(
            Hunk(
                start=h.start + group_start,
                end=h.end + group_start,
                text=h.text,
                line=h.line + line - 1,
                old_line_count=h.old_line_count,
                new_line_count=h.new_line_count,
            )
            for h in line_hunks(old, new)
        )
    return hunks, kept


def _occurrences(text: str, old_text: str) -> list[tuple[int, int]]:
    """Where `old_text` is in `text`, without overlaps (as str.count and replace see it).

    Where it is not found as written, each of its LFs may stand for a CRLF: read_file shows
    lines without their CR, and a file may mix both.
    """
    found = []
    at = text.find(old_text)
    while at != -1:
        found.append((at, at + len(old_text)))
        at = text.find(old_text, at + len(old_text))
    if found or "\n" not in old_text or "\r" not in text:
        return found
    pattern = re.compile("\r?\n".join(map(re.escape, old_text.split("\n"))))
    return [match.span() for match in pattern.finditer(text)]


def planned_edit(
    text: str, arguments: dict[str, Any], secrets: tuple[str, ...], name: str
) -> tuple[list[Hunk], int]:
    """The hunks of an edit_file call, and how many of the lines the model wrote were given
    the file's CRLF; CPU work, run off the event loop.

    old_text is looked for in the text the model was shown, secrets redacted, so that no
    answer (found, not found, how often, similar lines) says whether a guess at a secret
    is right.
    """
    view = Redacted.of(text, secrets)
    old_text, new_text = arguments["old_text"], arguments["new_text"]
    found = _occurrences(view.shown, old_text)
    if not found:
        raise _not_found(view.shown, arguments["old_text"], name)
    if old_text == new_text:
        raise ToolError("old_text and new_text are the same: nothing to change")
    if len(found) > 1 and not arguments.get("replace_all", False):
        lines = [str(_line_of(view.shown, at)) for at, _ in found[:20]]
        raise ToolError(
            f"old_text occurs {len(found)} times in {name} (lines {', '.join(lines)}); include "
            "more surrounding lines to make it unique, or set replace_all to change every one"
        )
    spans = []
    for at, end in found:
        span = view.original(at, end)
        if span is None:
            raise ToolError(
                f"old_text includes {REDACTED}, which stands for a secret: choose old_text "
                "that leaves it out."
            )
        spans.append(span)
    hunks, kept = _replacement_hunks(text, spans, new_text)
    if not hunks:  # the same text, but for line endings the file keeps
        raise ToolError("old_text and new_text are the same: nothing to change")
    return hunks, kept


async def edit_file(
    context: ToolContext, arguments: dict[str, Any], before_change: BeforeChange
) -> str:
    target, text = await _current_text(context, arguments["path"], writing=True)
    name = relative(context.workspace.root, target)
    if text is None:
        raise ToolError(f"{name} does not exist; create it with write_file")
    if not arguments["old_text"]:
        raise ToolError("old_text is empty; give the exact text to replace (or use write_file)")
    # Off the loop: on a big file, finding and diffing takes long enough to hold up a cancel.
    hunks, kept = await asyncio.to_thread(planned_edit, text, arguments, context.secrets, name)
    new_text = await asyncio.to_thread(apply_hunks, text, hunks)
    change = Change(path=target, old_text=text, new_text=new_text, hunks=hunks, tool="edit_file")
    return await propose(context, change, before_change) + _kept_note(kept, name)


async def write_file(
    context: ToolContext, arguments: dict[str, Any], before_change: BeforeChange
) -> str:
    target, text = await _current_text(context, arguments["path"], writing=True)
    choice = arguments.get("line_endings", "keep")
    content = converted(arguments["content"], choice)
    name = relative(context.workspace.root, target)
    if text is None:
        hunk = Hunk(
            start=0,
            end=0,
            text=content,
            line=1,
            old_line_count=0,
            new_line_count=len(text_lines(content)),
        )
        return await propose(
            context,
            Change(path=target, old_text=None, new_text=content, hunks=[hunk], tool="write_file"),
            before_change,
        )
    if secret_spans(text, context.secrets):
        # Whether the rewrite equals the file, or which lines it changes, would tell the
        # model whether its guess at the secret is right.
        raise ToolError(
            f"{name} holds a secret (shown as {REDACTED}): rewriting it whole would destroy "
            "the secret, or tell whether a guess at it is right. Edit around those lines "
            "with edit_file instead."
        )
    kept = 0
    if choice == "keep":
        content, kept = await asyncio.to_thread(follow, text, [(content, True)])
    if content == text:
        if kept:
            return (
                f"{name} already has this content but for line endings, which were kept: "
                f"{_kept(kept, name)} {_CONVERT}"
            )
        return f"{name} already has exactly this content."
    hunks = await asyncio.to_thread(line_hunks, text, content)
    change = Change(path=target, old_text=text, new_text=content, hunks=hunks, tool="write_file")
    return await propose(context, change, before_change) + _kept_note(kept, name)


_CONVERT = 'To convert a file\'s line endings, write it with line_endings "lf" or "crlf".'


def _kept(lines: int, name: str) -> str:
    return f"{lines} of the lines you wrote end with CRLF, as in {name}, not with LF."


def _kept_note(lines: int, name: str) -> str:
    """The line of an edit's answer saying the file's CRLF endings were kept against the
    model's LFs (a file that mixes both), or "" when none were."""
    return f"\nLine endings kept: {_kept(lines, name)} {_CONVERT}" if lines else ""


def _check_no_redacted_secret_written_back(context: ToolContext, change: Change, name: str) -> None:
    """The model sees secrets as [redacted]; writing that back would destroy them."""
    old = change.old_text or ""
    # Counted in the hunks only: they hold whole lines, so no REDACTED straddles their ends.
    added = sum(h.text.count(REDACTED) - old.count(REDACTED, h.start, h.end) for h in change.hunks)
    if added > 0 and secret_spans(old, context.secrets):
        raise ToolError(
            f"{REDACTED} in the new text stands for a secret that {name} holds; writing it "
            "would destroy the secret. Edit around those lines with edit_file instead."
        )


async def written_once_allowed(
    gate: Gate, workspace: Workspace, change: Change, question: str
) -> Landed:
    """A change to review that the editor cannot show (`Landed.question`): the gate puts it
    to the user as a question, and the workspace writes it as it is once allowed."""
    name = relative(workspace.root, change.path)
    asked = Request(source="write", tool=change.tool, arguments={"path": name}, shown=question)
    try:
        await gate.ask(asked)
    except Refusal as refusal:
        return Landed(False, rejected_reason=refusal.reason())
    change.reviewed = False  # the user allowed it as shown: it lands whole
    return await workspace.propose(change)


async def propose(context: ToolContext, change: Change, before_change: BeforeChange) -> str:
    """Put the change to the user and tell the model exactly what landed."""
    name = relative(context.workspace.root, change.path)
    _check_no_redacted_secret_written_back(context, change, name)
    asked = Request(source="edit", tool=change.tool, arguments={"path": name})
    change.reviewed = (await context.gate().ask(asked)).reviewed
    await before_change([name])
    before = await problems_before(context, change.path)
    outcome = await context.workspace.propose(change)
    if outcome.question:
        outcome = await written_once_allowed(
            context.gate(), context.workspace, change, outcome.question
        )
    if _nothing_landed(change, outcome):
        context.edits.rejected += 1
        raise ToolError(not_applied(change, outcome, name))
    context.edits.applied += 1
    if _kept_some(change, outcome):
        context.edits.partly += 1
    report = describe(change, outcome, name, context.secrets)
    return report + await new_problems(context, change.path, before)


def _kept_some(change: Change, outcome: Landed) -> bool:
    """Whether the user kept some of the hunks, not all."""
    if outcome.text is None or outcome.text == change.new_text:
        return False
    choices = landed(change.old_text or "", change.hunks, outcome.text)
    return choices is not None and not all(choices)


def _nothing_landed(change: Change, outcome: Landed) -> bool:
    if outcome.applied and outcome.text in (None, change.new_text):
        return False
    return not outcome.applied or outcome.text == (change.old_text or "")


_PATH = {"type": "string", "description": "Path relative to the workspace root."}

_READ_RANGE = re.compile(r"^\[lines (\d+)-(\d+) of (\d+)", re.MULTILINE)
_NUMBERED = re.compile(r"^\d+\t", re.MULTILINE)


def _read_words(arguments: dict[str, Any], result: str) -> tuple[bool, str]:
    """`read app.py (lines 20\u201360 of 300)`, `read app.py (42 lines)`: what was read, whatever
    note follows it (project memory)."""
    name = arguments["path"]
    if result.startswith("[image "):  # `read shot.png (image: PNG, 800x600 px, ...)`
        return True, f"read {name} (image{result.partition(':')[2].partition(']')[0]})"
    lines = len(_NUMBERED.findall(result))
    if not lines:
        return True, f"read {name} (empty)"
    shown = _READ_RANGE.search(result)
    if shown:
        first, end, total = shown.groups()
        return True, f"read {name} (lines {first}\u2013{end} of {total})"
    return True, f"read {name} ({counted(lines, 'line')})"


READ_FILE = Tool(
    name="read_file",
    description=(
        "Read a text file as the editor has it (unsaved changes included). Lines are "
        "numbered 'N<tab>text'; the numbers are not part of the file. "
        f"Reads up to {READ_LINES} lines; use offset and limit for more. {IMAGES_NOTE}"
    ),
    properties={
        "path": _PATH,
        "offset": {"type": "integer", "minimum": 1, "description": "First line, from 1."},
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines."},
    },
    required=("path",),
    handler=read_file,
    read_only=True,
    summary_field="path",
    words=_read_words,
)

WRITE_FILE = Tool(
    name="write_file",
    description=(
        "Create a file, or replace a whole file's content. The user reviews the change; the "
        "result says what they accepted. Prefer edit_file for changes to existing files. "
        "An existing file keeps its line endings: each line you write ends as the line it "
        "replaces (CRLF or LF), and the result says so; line_endings converts them."
    ),
    properties={
        "path": _PATH,
        "content": {"type": "string", "description": "The complete new content."},
        "line_endings": {
            "type": "string",
            "enum": list(CHOICES),
            "description": (
                "keep (default): the file's own, line by line; lf or crlf: every line of the "
                "new content ends so."
            ),
        },
    },
    required=("path", "content"),
    handler=write_file,
    summary_field="path",
    gated=True,
)

EDIT_FILE = Tool(
    name="edit_file",
    description=(
        "Replace old_text with new_text in a file. old_text must match the file exactly "
        "(without the line numbers read_file shows) and occur once, unless replace_all is "
        "true. Write lines with LF: each line of new_text ends as the line it replaces (or, "
        "added, as the line above it), so a CRLF file stays CRLF and lines you leave as they "
        "were keep their bytes. The user reviews the change; the result says what they "
        "accepted."
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
    gated=True,
)
