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


def changed_window(before: str, after: str, reach: int) -> Window:
    """The lines that differ and `reach` (>= 1) lines on each side (fewer at the ends)."""
    if _lone_returns(before) or _lone_returns(after):
        # A line may end in a lone CR: counting LFs would misnumber lines, so split it all.
        old, new = split_lines(before), split_lines(after)
        return Window(0, old, new, len(old))
    prefix = _common_prefix(before, after, min(len(before), len(after)))
    limit = min(len(before), len(after)) - prefix
    suffix = _common_prefix(before[::-1], after[::-1], limit)
    start = before.rfind("\n", 0, prefix)
    for _ in range(reach):
        if start < 0:
            break
        start = before.rfind("\n", 0, start)
    start += 1
    end = before.find("\n", len(before) - suffix)
    for _ in range(reach):
        if end < 0:
            break
        end = before.find("\n", end + 1)
    if end < 0:
        end = len(before)
    elif before[end - 1] == "\r":  # a CRLF: the CR, past the change since reach >= 1, is shared
        end -= 1
    shift = len(after) - len(before)
    return Window(
        base=before.count("\n", 0, start),
        old=split_lines(before[start:end]),
        new=split_lines(after[start : end + shift]),
        total=before.count("\n") + 1,
    )
