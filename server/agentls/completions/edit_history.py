"""Each document's recent edits, as the line groups Zeta's `### User Edits:` shows as diffs.

An edit is found from the whole text before and after one didChange (their common first and
last lines). Edits landing near the document's latest group coalesce into it, as Zed's edit
prediction does, so typing a word is one group and not one per key. A group keeps only its
region (the changed lines and three lines around them, before and now), never the document,
and the counts and sizes are capped, so memory stays small whatever the documents weigh.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass

from ..edits import common_ends
from .text_window import Window, changed_window
from .udiff import CONTEXT, unified_diff

GROUPING_LINE_SPAN = 8
"""An edit this many lines or fewer from the latest group's region joins it (Zed's span)."""
MAX_GROUPS = 5
"""Groups kept per document, the oldest dropped first."""
MAX_GROUP_CHARS = 6144
"""A group whose region grows past this (Zed: 2048 tokens' worth) is not recorded: a paste
or a reformat says little about the next edit, and would crowd out the rest."""
MAX_DOCUMENTS = 64
"""Documents with history kept, the least recently edited forgotten first."""
EVENT_TOKENS = 500
"""Zed's budget for the whole section (UTF-8 bytes / 3): the newest groups that fit."""


@dataclass
class _Group:
    """Lines `start ..` of the document: `old` before the group's first edit, `new` now."""

    start: int
    old: list[str]
    new: list[str]
    at_end: bool
    """The region reaches the document's end (whose empty last line the diff leaves out)."""

    def size(self) -> int:
        return sum(map(len, self.old)) + sum(map(len, self.new))

    def diff(self) -> str:
        old, new = self.old, self.new
        if self.at_end:  # "a\n" is one line to Zed's diff, not two
            old = old[:-1] if old and old[-1] == "" else old
            new = new[:-1] if new and new[-1] == "" else new
        return unified_diff(old, new, self.start)


@dataclass
class _Document:
    groups: deque[_Group]
    open: bool = True
    """The last group still matches the document line for line, so an edit may join it."""


class EditHistory:
    """The recent edits of each open document, keyed by uri."""

    def __init__(self) -> None:
        self._documents: OrderedDict[str, _Document] = OrderedDict()

    def record(self, uri: str, before: str, after: str) -> None:
        """Note one change of the document from `before` to `after` (whole texts)."""
        if before == after:
            return
        document = self._documents.pop(uri, None) or _Document(deque(maxlen=MAX_GROUPS))
        self._documents[uri] = document
        while len(self._documents) > MAX_DOCUMENTS:
            self._documents.popitem(last=False)
        # Every line a group may take from the text lies this near the change.
        window = changed_window(before, after, CONTEXT + GROUPING_LINE_SPAN)
        head, tail = common_ends(window.old, window.new)
        if head + tail == len(window.old) == len(window.new):
            return  # only line breaks changed (CRLF to LF): no line did
        first, old_end = window.base + head, window.base + len(window.old) - tail
        changed = window.new[head : len(window.new) - tail]
        last = document.groups[-1] if document.groups and document.open else None
        start, end = max(first - CONTEXT, 0), min(old_end + CONTEXT, window.total)
        region_old = region_now = _lines(window, start, end)
        joins = last is not None and _near(last, first, old_end)
        if last is not None and joins:
            # Lines outside the group's region are as they were when the group began.
            last_end = last.start + len(last.new)
            start, end = min(last.start, start), max(last_end, end)
            above, below = _lines(window, start, last.start), _lines(window, last_end, end)
            region_old = above + last.old + below
            region_now = above + last.new + below
        new = region_now[: first - start] + changed + region_now[old_end - start :]
        group = _Group(start, region_old, new, end == window.total)
        # Too big to record: the groups before it stay true, but none may grow any more.
        document.open = group.size() <= MAX_GROUP_CHARS
        if document.open:
            if joins:
                document.groups.pop()
            document.groups.append(group)

    def forget(self, uri: str) -> None:
        """Drop the document's history (closed, or no longer to be shown to a model)."""
        self._documents.pop(uri, None)

    def has_edits(self, uri: str) -> bool:
        document = self._documents.get(uri)
        return document is not None and any(group.diff() for group in document.groups)

    def diff(self, uri: str, path: str) -> str:
        """The recent edits as Zeta's `### User Edits:` section: the newest groups that fit
        Zed's budget, oldest first, each `User edited "<path>":` and a fenced diff."""
        document = self._documents.get(uri)
        if document is None:
            return ""
        events: list[str] = []
        budget = EVENT_TOKENS
        for group in reversed(document.groups):
            diff = group.diff()
            if not diff:
                continue
            event = f"User edited {_quoted(path)}:\n```diff\n{diff}\n```"
            tokens = len(event.encode("utf-8", "surrogatepass")) // 3
            if tokens > budget:
                break
            events.append(event)
            budget -= tokens
        return "\n\n".join(reversed(events))


def _lines(window: Window, start: int, end: int) -> list[str]:
    """Lines start..end of the text before the change, which the window holds."""
    return window.old[start - window.base : end - window.base] if start < end else []


def _near(group: _Group, first: int, old_end: int) -> bool:
    """Whether the change of lines first..old_end lies within the span of the group's region."""
    return (
        first <= group.start + len(group.new) + GROUPING_LINE_SPAN
        and old_end >= group.start - GROUPING_LINE_SPAN
    )


def _quoted(path: str) -> str:
    """The path as Rust's `{:?}` writes it, which is how Zed names the file in the event."""
    escapes = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    out = []
    for char in path:
        if char in escapes:
            out.append(escapes[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
