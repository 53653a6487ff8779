"""Edits as hunks: computing them, and telling which of them landed.

Pure text functions; offsets are indices into Python strings (code points). Converting them
to an editor's positions is the front end's business.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
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


_EXACT_DIFF_LINES = 2000
"""Above this many lines (both sides), difflib's exact diff can take minutes: it is
quadratic in lines that repeat (blank lines, braces), and in the number of matches."""

Opcode = tuple[str, int, int, int, int]


def line_opcodes(a: list[str], b: list[str]) -> Sequence[Opcode]:
    """difflib's opcodes from lines `a` to lines `b`; anchored when they are many."""
    if len(a) + len(b) <= _EXACT_DIFF_LINES:
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return _anchored_opcodes(a, b)


def _anchored_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """A patience diff: the lines found once on each side, in the longest run that keeps
    their order, are anchors; between two anchors, an exact diff when short, else one
    replacement. O(n log n), and as good as exact for code, where most lines are unique."""
    count_a, count_b = Counter(a), Counter(b)
    in_b = {line: j for j, line in enumerate(b) if count_b[line] == 1}
    pairs = [(i, in_b[line]) for i, line in enumerate(a) if count_a[line] == 1 and line in in_b]
    opcodes: list[Opcode] = []
    i0 = j0 = 0
    for i, j in [*_longest_increasing(pairs), (len(a), len(b))]:
        if i - i0 + j - j0 <= _EXACT_DIFF_LINES:
            matcher = difflib.SequenceMatcher(None, a[i0:i], b[j0:j], autojunk=False)
            gap = [(t, i0 + p, i0 + q, j0 + r, j0 + u) for t, p, q, r, u in matcher.get_opcodes()]
            opcodes.extend(gap)
        else:
            opcodes.append(("replace", i0, i, j0, j))
        if i < len(a):
            opcodes.append(("equal", i, i + 1, j, j + 1))
        i0, j0 = i + 1, j + 1
    return opcodes


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of `pairs` (ordered by their first) whose seconds increase."""
    tails: list[int] = []  # tails[k]: the index in pairs ending the best run of k + 1
    ends: list[int] = []  # the second of each, for bisect
    previous: list[int] = []
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(ends, j)
        previous.append(tails[k - 1] if k else -1)
        if k == len(tails):
            tails.append(index)
            ends.append(j)
        else:
            tails[k] = index
            ends[k] = j
    run = []
    at = tails[-1] if tails else -1
    while at != -1:
        run.append(pairs[at])
        at = previous[at]
    return run[::-1]


def common_ends(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """(head, tail): how many lines `a` and `b` share at their start, then at their end
    (the two never overlap)."""
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def line_hunks(old: str, new: str) -> list[Hunk]:
    """The minimal line-wise hunks that turn `old` into `new`."""
    a = lines_with_ends(old)
    b = lines_with_ends(new)
    # Strip the common ends first: difflib is quadratic-ish and most edits touch a few lines
    # of a big file.
    head, tail = common_ends(a, b)
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    a_base = sum(map(len, a[:head]))
    a_off, b_off = _offsets(a_mid), _offsets(b_mid)
    b_text = "".join(b_mid)
    hunks = []
    for tag, i1, i2, j1, j2 in line_opcodes(a_mid, b_mid):
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
