"""Where two texts differ, as lines, without splitting the whole of either.

A didChange of a multi-megabyte file would otherwise cost two full splits and a walk over every
line per keystroke; here the common start and end are found by comparing growing chunks (C
speed), and only the lines around the difference are split.
"""

from __future__ import annotations

from dataclasses import dataclass

from .lines import split_lines


@dataclass(frozen=True)
class Window:
    """Lines `base ..` of the text before (`old`) and after (`new`) the change; outside them
    the two texts have the same lines. `total` is the line count of the text before."""

    base: int
    old: list[str]
    new: list[str]
    total: int


def _common_prefix(a: str, b: str, limit: int) -> int:
    """How many leading characters `a` and `b` share, at most `limit`."""
    start, step = 0, 256
    while start < limit:
        end = min(start + step, limit)
        if a[start:end] != b[start:end]:
            while end - start > 1:  # the first difference lies in start..end
                middle = (start + end) // 2
                if a[start:middle] == b[start:middle]:
                    start = middle
                else:
                    end = middle
            return start
        start, step = end, step * 2
    return limit


def _lone_returns(text: str) -> bool:
    return "\r" in text and text.count("\r") != text.count("\r\n")


def _back(text: str, offset: int, lines: int) -> int:
    """The start of the line `lines` lines above the one holding `offset` (LF-counted)."""
    start = text.rfind("\n", 0, offset)
    for _ in range(lines):
        if start < 0:
            break
        start = text.rfind("\n", 0, start)
    return start + 1


def _forward(text: str, offset: int, lines: int) -> int:
    """The end (before its break) of the line `lines` lines below the one holding `offset`;
    `lines` >= 1 keeps a CRLF the window ends at out of any change."""
    end = text.find("\n", offset)
    for _ in range(lines):
        if end < 0:
            break
        end = text.find("\n", end + 1)
    if end < 0:
        return len(text)
    return end - 1 if text[end - 1] == "\r" else end


def changed_window(before: str, after: str, reach: int) -> Window:
    """The lines that differ and `reach` (>= 1) lines on each side (fewer at the ends)."""
    if _lone_returns(before) or _lone_returns(after):
        # A line may end in a lone CR: counting LFs would misnumber lines, so split it all.
        old, new = split_lines(before), split_lines(after)
        return Window(0, old, new, len(old))
    prefix = _common_prefix(before, after, min(len(before), len(after)))
    limit = min(len(before), len(after)) - prefix
    suffix = _common_prefix(before[::-1], after[::-1], limit)
    start = _back(before, prefix, reach)
    end = _forward(before, len(before) - suffix, reach)
    shift = len(after) - len(before)
    return Window(
        base=before.count("\n", 0, start),
        old=split_lines(before[start:end]),
        new=split_lines(after[start : end + shift]),
        total=before.count("\n") + 1,
    )


def _line_start(text: str, row: int) -> int:
    """Where line `row` starts (the text's end if it has fewer lines): LFs are counted by the
    chunk, and walked one by one only in the chunk that holds the line."""
    offset, seen, chunk = 0, 0, 1 << 16
    while offset < len(text):
        end = min(offset + chunk, len(text))
        found = text.count("\n", offset, end)
        if seen + found >= row:
            break
        seen, offset = seen + found, end
    while seen < row:
        newline = text.find("\n", offset)
        if newline < 0:
            return len(text)
        offset, seen = newline + 1, seen + 1
    return offset


def lines_around(text: str, row: int, reach: int) -> tuple[int, list[str], int]:
    """(base, lines, total): lines `base ..` of the text, `reach` (>= 1) on each side of
    line `row` (clamped into the text), and how many lines the text has."""
    if _lone_returns(text):
        lines = split_lines(text)
        row = min(max(row, 0), len(lines) - 1)
        base = max(row - reach, 0)
        return base, lines[base : row + reach + 1], len(lines)
    total = text.count("\n") + 1
    at = _line_start(text, min(max(row, 0), total - 1))
    start = _back(text, at, reach)
    return text.count("\n", 0, start), split_lines(text[start : _forward(text, at, reach)]), total
