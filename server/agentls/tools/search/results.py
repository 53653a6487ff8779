"""What a search found, kept in bounded memory and told sorted, with honest counts.

A search may find millions of lines in any order (ripgrep searches files in parallel). The
answer shows the first matches in path order, so it is the same from run to run; it keeps
only the lines of the files that sort first, enough for what is shown, and counts the rest.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Literal

MAX_MATCHES = 200
"""Matching lines shown by grep's `content` output."""
MAX_FILES = 1000
"""Files named by list_files and by grep's `files` and `count` outputs."""
MATCH_CHARS = 300

Output = Literal["content", "files", "count"]
Line = tuple[int, bool, str]
"""A line's number (as read_file numbers it), whether it matches (else it is context), text."""


@dataclass(order=True)
class _Largest:
    """Orders paths largest first in a heapq (a min-heap)."""

    key: bytes
    path: str = field(compare=False)


def _key(path: str) -> bytes:
    # Code-point order, the same for every run and every file name.
    return path.encode("utf-8", "surrogatepass")


def cut(text: str | bytes) -> str:
    """A line as shown: rg's bytes decoded (its CR before the LF dropped), at most
    MATCH_CHARS characters."""
    if isinstance(text, bytes):
        text = text.removesuffix(b"\r").decode("utf-8", "replace")
    return text if len(text) <= MATCH_CHARS else text[:MATCH_CHARS] + " [...]"


class Found:
    """Lines found per file: every file's count, the lines of the first files by path."""

    def __init__(self, keep: int = MAX_MATCHES) -> None:
        self.keep = keep
        self.counts: dict[str, int] = {}
        """Matching lines per file, for every file with one."""
        self._lines: dict[str, list[Line]] = {}
        self._kept_matches: dict[str, int] = {}
        self._kept_total = 0
        self._largest: list[_Largest] = []
        self._floor: bytes | None = None
        """The smallest path whose lines were let go: no path from it on is kept."""
        self._passed_over = ""

    def add(self, path: str, number: int, is_match: bool, text: str | bytes) -> None:
        """A line of `path`; `text` as read_file shows it, or as rg printed it."""
        if is_match:
            self.counts[path] = self.counts.get(path, 0) + 1
        lines = self._lines.get(path)
        if lines is None:
            if path == self._passed_over:
                return
            key = _key(path)
            if self._floor is not None and key >= self._floor:
                self._passed_over = path  # its next lines, which come next, are not kept
                return
            lines = self._lines[path] = []
            self._kept_matches[path] = 0
            heapq.heappush(self._largest, _Largest(_inverted(key), path))
        if self._kept_matches[path] >= self.keep:
            return  # this file alone fills the answer
        lines.append((number, is_match, cut(text)))
        if is_match:
            self._kept_matches[path] += 1
            self._kept_total += 1
            self._let_go()

    def _let_go(self) -> None:
        """Drop the lines of the last files by path while the others hold enough matches."""
        while self._largest:
            path = self._largest[0].path
            if self._kept_total - self._kept_matches[path] < self.keep:
                return
            heapq.heappop(self._largest)
            self._kept_total -= self._kept_matches.pop(path)
            del self._lines[path]
            key = _key(path)
            self._floor = key if self._floor is None else min(self._floor, key)

    def forget(self, path: str) -> None:
        """Drop what was found in `path` (to search its text again)."""
        self.counts.pop(path, None)
        if path in self._lines:
            del self._lines[path]
            self._kept_total -= self._kept_matches.pop(path)
            self._largest = [entry for entry in self._largest if entry.path != path]
            heapq.heapify(self._largest)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def render(self, output: Output, separate_groups: bool) -> tuple[list[str], bool]:
        """The answer's lines, and whether it left something out."""
        paths = sorted(self.counts, key=_key)
        if output == "files":
            return paths[:MAX_FILES], len(paths) > MAX_FILES
        if output == "count":
            return [f"{p}: {self.counts[p]}" for p in paths[:MAX_FILES]], len(paths) > MAX_FILES
        shown: list[str] = []
        matches = 0
        for path in paths:
            previous: int | None = None
            for number, is_match, text in self._lines.get(path, []):
                if is_match and matches == self.keep:
                    return shown, True
                if separate_groups and shown and previous != number - 1:
                    shown.append("--")
                mark = ":" if is_match else "-"
                shown.append(f"{path}{mark}{number}{mark} {text}")
                matches += is_match
                previous = number
        return shown, matches < self.total


def _inverted(key: bytes) -> bytes:
    """A key whose order is `key`'s reversed, for bytes without a terminator: each byte
    inverted, and a final 0xff so that a prefix sorts after its extensions."""
    return bytes(255 - b for b in key) + b"\xff"
