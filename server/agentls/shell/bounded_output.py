"""Output cut to a length: the head and the tail kept, the middle counted, no secret shown."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..redaction import redact


class BoundedOutput:
    """Keeps the head and the tail of a stream within `limit` characters, counting the rest.

    Both ends are kept a margin longer (the longest secret), so a secret at a cut is seen
    whole: the cut moves to its edge and no part of it is shown.
    """

    def __init__(self, limit: int, secrets: tuple[str, ...] = ()) -> None:
        self.limit = limit
        self.secrets = secrets
        self.margin = max(map(len, secrets), default=0)
        self._head: list[str] = []
        self._head_size = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self.total = 0

    def add(self, chunk: str) -> None:
        self.total += len(chunk)
        room = self.limit // 2 + self.margin - self._head_size
        if room > 0:
            self._head.append(chunk[:room])
            self._head_size += len(chunk[:room])
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        keep = self.limit - self.limit // 2 + self.margin
        while self._tail_size - len(self._tail[0]) >= keep:
            self._tail_size -= len(self._tail.popleft())

    def text(self) -> str:
        head = "".join(self._head)
        tail = "".join(self._tail)
        if self.total <= self.limit:
            return redact(head + tail, self.secrets)
        if self._head_size + self._tail_size == self.total:
            head = tail = head + tail  # nothing dropped yet: both ends cut the same text
        head_end = self._secret_free_cut(head, self.limit // 2, backwards=True)
        tail_start = self._secret_free_cut(
            tail, len(tail) - (self.limit - self.limit // 2), backwards=False
        )
        cut = self.total - head_end - (len(tail) - tail_start)
        shown_head = redact(head[:head_end], self.secrets)
        shown_tail = redact(tail[tail_start:], self.secrets)
        return f"{shown_head}\n[... {cut} characters cut from the middle ...]\n{shown_tail}"

    def _secret_free_cut(self, text: str, at: int, backwards: bool) -> int:
        """`at`, moved off any secret it would split: back to its start, or on to its end."""
        at = max(at, 0)
        moved = True
        while moved:
            moved = False
            for secret in self.secrets:
                start = text.find(secret, max(at - len(secret) + 1, 0))
                if start != -1 and start < at < start + len(secret):
                    at = start if backwards else start + len(secret)
                    moved = True
        return at


def cut_middle(text: str, limit: int, secrets: tuple[str, ...] = ()) -> str:
    output = BoundedOutput(limit, secrets)
    output.add(text)
    return output.text()


class LiveLines:
    """A command's output passed on as it comes, whole lines at a time (a secret is never
    split between two pieces, so each piece can be redacted alone). A line is shown to its
    first `longest` characters; the kept text is a margin longer (the longest secret), so a
    secret at the cut is redacted before it is cut."""

    def __init__(self, sink: Callable[[str], None], secrets: tuple[str, ...] = ()) -> None:
        self.sink = sink
        self.secrets = secrets
        self.keep = LONGEST_LIVE_LINE + max(map(len, secrets), default=0)
        self._line: list[str] = []
        self._size = 0
        self._cut = False

    def add(self, chunk: str) -> None:
        *whole, rest = chunk.split("\n")
        shown = []
        for piece in whole:
            self._take(piece)
            shown.append(self._shown())
        self._take(rest)
        if shown:
            self.sink("".join(shown))

    def finish(self) -> None:
        if self._size or self._cut:
            self.sink(self._shown())

    def _take(self, piece: str) -> None:
        room = self.keep - self._size
        if len(piece) > room:
            self._cut = True
            piece = piece[: max(room, 0)]
        if piece:
            self._line.append(piece)
            self._size += len(piece)

    def _shown(self) -> str:
        line = redact("".join(self._line), self.secrets)
        if self._cut:
            line = line[:LONGEST_LIVE_LINE] + " …"
        self._line, self._size, self._cut = [], 0, False
        return line + "\n"


LONGEST_LIVE_LINE = 2000
"""Characters of one line of a running command's output shown as it runs."""
