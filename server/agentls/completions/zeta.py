"""Zeta's open next-edit format: the prompt for a cursor, and the model's answer as line edits.

The prompt is byte for byte the one zed-industries/zed builds for its Zeta models (the `zeta1`
format): an instruction, the recent edits as diffs, then an excerpt of the document fenced with
its path, in which an editable region around the cursor is marked; the model answers with that
region rewritten. Zed picks the region by syntax first; without a syntax tree (as here, and in
Zed for a plain-text buffer) it grows line by line around the cursor, which is what this does.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..edits import line_opcodes
from .lines import split_lines
from .text_window import lines_around

CURSOR_MARKER = "<|user_cursor_is_here|>"
START_OF_FILE_MARKER = "<|start_of_file|>"
REGION_START_MARKER = "<|editable_region_start|>"
REGION_END_MARKER = "<|editable_region_end|>"
"""The model stops after this marker: callers may pass it as a stop sequence."""

_INSTRUCTION = (
    "### Instruction:\n"
    "You are a code completion assistant and your task is to analyze user edits and then "
    "rewrite an excerpt that the user provides, suggesting the appropriate edits within the "
    "excerpt, taking into account the cursor location.\n\n"
    "### User Edits:\n\n"
)
_EXCERPT_HEADER = "\n\n### User Excerpt:\n\n"
_RESPONSE_HEADER = "\n\n### Response:\n"

REWRITE_TOKENS = 350
"""Zed's budget for the editable region, in its estimated tokens (UTF-8 bytes / 3)."""
CONTEXT_TOKENS = 150
"""Zed's budget for the read-only context around the region."""
WINDOW_LINES = 2000
"""Lines read on each side of the cursor: the budgets are spent long before, unless the lines
are nearly empty (under 3 bytes cost Zed nothing), where Zed would read the whole file."""
MAX_ANSWER_CHARS = 64_000
"""A longer answer is not a rewrite of a ~1 KB region: it is dropped before parsing."""


@dataclass(frozen=True)
class ZetaPrompt:
    """The prompt for the model, and what maps its answer back onto the document."""

    prompt: str
    region_start: int
    """The editable region's first line (0-based) in the document."""
    region_lines: tuple[str, ...]
    """The region's lines as the prompt showed them, without line breaks."""


@dataclass(frozen=True)
class LineEdit:
    """Replace the content of document line `line` (0-based, without its break) with `text`.

    `text` holds line breaks ("\\n") when the model inserted lines there. `span` is how many
    lines are replaced, from `line` on, breaks between them included: 1 for a changed line, more
    when the model deleted lines (they are joined into this edit, so a deletion is exact).
    """

    line: int
    text: str
    span: int = 1


def _tokens(line: str) -> int:
    return len(line.encode("utf-8", "surrogatepass")) // 3


def _expand(lines: list[str], start: int, end: int, budget: int) -> tuple[int, int]:
    """Whole lines around `start..end` (inclusive), one above then one below per round, while
    the budget lasts; the line that empties it is still taken (as Zed's `expand_range`)."""
    last = len(lines) - 1
    while True:
        grew = False
        if budget > 0 and start > 0:
            start -= 1
            budget = max(budget - _tokens(lines[start]), 0)
            grew = True
        if budget > 0 and end < last:
            end += 1
            budget = max(budget - _tokens(lines[end]), 0)
            grew = True
        if not grew:
            return start, end


def prompt(path: str, text: str, line: int, character: int, edits: str) -> ZetaPrompt:
    """The Zeta prompt for a cursor at `line`, `character` (code points) in `text`.

    `edits` is the `### User Edits:` section (EditHistory.diff); `path` names the document
    in the excerpt's fence. A cursor past the end is clamped to it.
    """
    base, lines, _ = lines_around(text, line, WINDOW_LINES)
    row = min(max(line, 0), base + len(lines) - 1) - base
    column = min(max(character, 0), len(lines[row]))
    first, last = _expand(lines, row, row, REWRITE_TOKENS)
    context_first, context_last = _expand(lines, first, last, CONTEXT_TOKENS)
    region = lines[first : last + 1]
    cursor_line = lines[row]
    marked = [*region]
    marked[row - first] = cursor_line[:column] + CURSOR_MARKER + cursor_line[column:]
    parts = [f"```{path}\n"]
    if base + context_first == 0:
        parts.append(f"{START_OF_FILE_MARKER}\n")
    parts.extend(f"{before}\n" for before in lines[context_first:first])
    parts.append(f"{REGION_START_MARKER}\n" + "\n".join(marked) + f"\n{REGION_END_MARKER}")
    parts.extend(f"\n{after}" for after in lines[last + 1 : context_last + 1])
    parts.append("\n```")
    excerpt = "".join(parts)
    return ZetaPrompt(
        prompt=_INSTRUCTION + edits + _EXCERPT_HEADER + excerpt + _RESPONSE_HEADER,
        region_start=base + first,
        region_lines=tuple(region),
    )


def rewritten_region(answer: str) -> list[str] | None:
    """The region's lines as the model rewrote them, or None when the answer has no region.

    The answer must open the region with its marker (once); the end marker may be missing (a
    stop sequence cuts it off), and then a closing code fence after the region is dropped.
    """
    if len(answer) > MAX_ANSWER_CHARS:
        return None
    content = answer.replace(CURSOR_MARKER, "")
    if content.count(REGION_START_MARKER) != 1:
        return None
    content = content.split(REGION_START_MARKER, 1)[1]
    content = content.removeprefix("\r\n").removeprefix("\n")
    if REGION_END_MARKER in content:
        content = content.split(REGION_END_MARKER, 1)[0]
    elif content.rstrip().endswith("```"):
        content = content.rstrip().removesuffix("```")
    content = content.removesuffix("\n").removesuffix("\r")
    return split_lines(content)


def line_edits(prompt: ZetaPrompt, answer: str) -> list[LineEdit]:
    """The document lines the model's answer changes, in order; [] if it does not parse.

    Lines are paired in order inside each changed block. Extra new lines ride on the block's
    last edit as text with breaks (or on the line before a pure insertion, which keeps its own
    text first); extra old lines widen the last edit's `span` (a pure deletion is joined to the
    line before it, or after it at the region's top).
    """
    new = rewritten_region(answer)
    if new is None or _holds_markers(prompt.region_lines):
        return []
    old = list(prompt.region_lines)
    if old[-1] == "" and new[-1] != "":
        # The region ended in a line break (often the file's last): a model that leaves out
        # the empty line after it is being terse, not asking to join the lines.
        new.append("")
    edits: list[LineEdit] = []
    for i1, i2, j1, j2 in _changed_blocks(old, new):
        edits.extend(_block_edits(old, new, i1, i2, j1, j2, prompt.region_start))
    return edits


def _changed_blocks(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    """The changed blocks (old[i1:i2] to new[j1:j2]), two blocks one unchanged line apart
    made one: an insertion or deletion borrows an unchanged neighbour line, and two blocks
    must not both borrow the same line (their edits would overlap)."""
    blocks: list[tuple[int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        if blocks and i1 - blocks[-1][1] <= 1:
            i1, _, j1, _ = blocks.pop()
        blocks.append((i1, i2, j1, j2))
    return blocks


def _holds_markers(lines: tuple[str, ...]) -> bool:
    """Whether the document's own region spells a marker: the answer's would then be cut in
    the wrong place (and lines after it read as deleted), so no edit is safe to offer."""
    return any(
        marker in line
        for line in lines
        for marker in (CURSOR_MARKER, REGION_START_MARKER, REGION_END_MARKER)
    )


def _block_edits(
    old: list[str], new: list[str], i1: int, i2: int, j1: int, j2: int, base: int
) -> list[LineEdit]:
    """The edits that turn old[i1:i2] into new[j1:j2] (one changed block)."""
    removed, added = old[i1:i2], new[j1:j2]
    if not removed:
        if i1 > 0:  # an insertion after line i1 - 1, which keeps its text
            return [LineEdit(base + i1 - 1, "\n".join([old[i1 - 1], *added]))]
        return [LineEdit(base + i1, "\n".join([*added, old[i1]]))]
    if not added:
        if i1 > 0:  # a deletion joined to the line before it, which keeps its text
            return [LineEdit(base + i1 - 1, old[i1 - 1], span=len(removed) + 1)]
        if i2 < len(old):
            return [LineEdit(base + i1, old[i2], span=len(removed) + 1)]
        return [LineEdit(base, "", span=len(removed))]
    paired = min(len(removed), len(added)) - 1
    edits = [LineEdit(base + i1 + k, added[k]) for k in range(paired) if removed[k] != added[k]]
    last = LineEdit(base + i1 + paired, "\n".join(added[paired:]), span=len(removed) - paired)
    if last.span > 1 or last.text != removed[paired]:
        edits.append(last)
    return edits
