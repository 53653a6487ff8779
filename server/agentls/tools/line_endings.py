"""Line endings of the text the model writes: the file's own, line by line.

The model reads lines without their CR (`read_file`), so it writes LF. Where its text
replaces lines of a file, each new line ends as the line it replaces does (an inserted line
as the line before it), and a line it leaves as it was keeps its bytes: one CRLF elsewhere
in a file changes nothing here. A CRLF the model writes itself is kept. Lone CRs are line
content, as `read_file` shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from ..edits import line_opcodes

Choice = Literal["keep", "lf", "crlf"]
CHOICES: tuple[Choice, ...] = ("keep", "lf", "crlf")

Line: TypeAlias = tuple[str, str, bool]
"""A line's text, its ending ("\\r\\n", "\\n" or "" at the end), and whether that ending is an
LF of the model's, to be given the file's ending."""


def converted(text: str, choice: Choice) -> str:
    """`text` with every line ending LF or CRLF; as it is for "keep"."""
    if choice == "keep":
        return text
    text = text.replace("\r\n", "\n")
    return text.replace("\n", "\r\n") if choice == "crlf" else text


def _lines(pieces: Sequence[tuple[str, bool]]) -> list[Line]:
    """The lines of the pieces joined; `True` marks the model's pieces."""
    lines: list[Line] = []
    current: list[str] = []
    for piece, models in pieces:
        parts = piece.split("\n")
        current.append(parts[0])
        for part in parts[1:]:
            content = "".join(current)
            if content.endswith("\r"):  # a CRLF, whoever wrote it, is kept
                lines.append((content[:-1], "\r\n", False))
            else:
                lines.append((content, "\n", models))
            current = [part]
    last = "".join(current)
    if last:
        lines.append((last, "", False))
    return lines


def _ending_near(old: list[Line], index: int, before: str) -> str:
    """The ending of old[index], else of the nearest old line that has one, else `before`."""
    nearest = [*old[index::-1], *old[index + 1 :]] if old else []
    return next((ending for _, ending, _ in nearest if ending), before or "\n")


def follow(old: str, pieces: Sequence[tuple[str, bool]], before: str = "") -> tuple[str, int]:
    """The text of `pieces` with each of the model's LFs given the ending of the `old` line
    it stands for, and how many of them became CRLF.

    `old` is the whole lines being replaced; `pieces` their new text, the model's pieces
    (True) between the file's (False), which are kept byte for byte; `before` the ending of
    the line above `old`, for a text of lines without any ending.
    """
    joined = "".join(piece for piece, _ in pieces)
    if "\r" not in old and before != "\r\n":
        return joined, 0  # every ending would be an LF: the common case, at no cost
    old_lines = _lines([(old, False)])
    new_lines = _lines(pieces)
    endings = [ending for _, ending, _ in new_lines]
    for tag, i1, i2, j1, j2 in _opcodes([t for t, _, _ in old_lines], [t for t, _, _ in new_lines]):
        for j in range(j1, j2):
            if not new_lines[j][2]:
                continue
            # An added line ends as the one above it; another as the old line it stands
            # for (the last of them for the lines beyond).
            index = max(i1 - 1, 0) if tag == "insert" else min(i1 + j - j1, i2 - 1)
            endings[j] = _ending_near(old_lines, index, before)
    text = "".join(line + ending for (line, _, _), ending in zip(new_lines, endings, strict=True))
    marked = zip(new_lines, endings, strict=True)
    return text, sum(1 for (_, _, models), ending in marked if models and ending == "\r\n")


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The opcodes from lines `a` to `b`, the common first and last lines taken out first:
    a whole-file rewrite mostly keeps them, and the diff is then of the rest alone."""
    head, limit = 0, min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle = line_opcodes(a[head : len(a) - tail], b[head : len(b) - tail])
    shifted = [(t, i1 + head, i2 + head, j1 + head, j2 + head) for t, i1, i2, j1, j2 in middle]
    ends = [("equal", 0, head, 0, head), ("equal", len(a) - tail, len(a), len(b) - tail, len(b))]
    return [ends[0], *shifted, ends[1]]
