"""Edits as hunks: computing them, and telling which of them landed.

Pure text functions; offsets are indices into Python strings (code points). Converting them
to an editor's positions is the front end's business.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Hunk:
    """Replace `old_text[start:end]` with `text`; `line` is the 1-based first line it touches."""

    start: int
    end: int
    text: str
    line: int
    old_line_count: int
    new_line_count: int

    def describe(self) -> str:
        last = self.line + max(self.old_line_count, 1) - 1
        where = f"line {self.line}" if last == self.line else f"lines {self.line}-{last}"
        if self.old_line_count == 0:
            return f"insertion before {where}"
        if self.new_line_count == 0:
            return f"deletion of {where}"
        return f"change of {where}"


def text_lines(text: str) -> list[str]:
    """The lines as the tools number them for the model: split at LF, a CR before it dropped."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def lines_with_ends(text: str) -> list[str]:
    """The lines `text_lines` numbers, each with its line end: `str.splitlines` would also
    break at form feeds and the like, and hunks would name other line numbers than read_file."""
    lines = [line + "\n" for line in text.split("\n")]
    last = lines.pop()[:-1]
    return [*lines, last] if last else lines


def _offsets(lines: list[str]) -> list[int]:
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def line_hunks(old: str, new: str) -> list[Hunk]:
    """The minimal line-wise hunks that turn `old` into `new`."""
    a = lines_with_ends(old)
    b = lines_with_ends(new)
    # Strip the common ends first: difflib is quadratic-ish and most edits touch a few lines
    # of a big file.
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    a_base = sum(map(len, a[:head]))
    a_off, b_off = _offsets(a_mid), _offsets(b_mid)
    b_text = "".join(b_mid)
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    hunks = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        hunks.append(
            Hunk(
                start=a_base + a_off[i1],
                end=a_base + a_off[i2],
                text=b_text[b_off[j1] : b_off[j2]],
                line=head + i1 + 1,
                old_line_count=i2 - i1,
                new_line_count=j2 - j1,
            )
        )
    return hunks


def apply_hunks(old: str, hunks: list[Hunk]) -> str:
    parts = []
    position = 0
    for hunk in hunks:
        parts.append(old[position : hunk.start])
        parts.append(hunk.text)
        position = hunk.end
    parts.append(old[position:])
    return "".join(parts)


def landed(old: str, hunks: list[Hunk], after: str) -> list[bool] | None:
    """Which hunks `after` shows applied to `old`, or None if `after` is no such combination.

    A search over the hunks that keeps, for each reachable position in `after`, the first
    choice that led there: exact, and linear for the usual case of distinct hunks.
    """
    states: dict[int, list[bool]] = {0: []}
    position = 0
    for hunk in hunks:
        between = old[position : hunk.start]
        original = old[hunk.start : hunk.end]
        next_states: dict[int, list[bool]] = {}
        for at, choices in states.items():
            if not after.startswith(between, at):
                continue
            at += len(between)
            if after.startswith(hunk.text, at):
                next_states.setdefault(at + len(hunk.text), [*choices, True])
            if after.startswith(original, at):
                next_states.setdefault(at + len(original), [*choices, False])
        states = next_states
        position = hunk.end
    rest = old[position:]
    for at, choices in states.items():
        if len(after) - at == len(rest) and after.endswith(rest):
            return choices
    return None


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        lines_with_ends(old),
        lines_with_ends(new),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
