"""Lines typed on stdin for the terminal's questions (`y`, `n`, a task without a terminal)."""

from __future__ import annotations

import asyncio
import os


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Answers:
    """Lines typed on stdin, read from the descriptor without blocking the event loop, so
    Ctrl-C cancels a wait at once, and without Python's buffering, so an answer typed ahead
    is kept for the next question."""

    def __init__(self, descriptor: int | None) -> None:
        self.descriptor = descriptor
        self._pending = b""
        self._ended = False

    def _take_line(self) -> str | None:
        if b"\n" in self._pending:
            line, self._pending = self._pending.split(b"\n", 1)
        elif self._ended and self._pending:
            line, self._pending = self._pending, b""
        else:
            return None
        return line.decode("utf-8", "replace")

    def _read(self, descriptor: int) -> None:
        data = os.read(descriptor, 4096)
        self._pending += data
        self._ended = not data

    async def text(self) -> str | None:
        """The next line as typed, or None when the input has ended (Ctrl-D, stdin closed)."""
        descriptor = self.descriptor
        if descriptor is None:
            return None
        loop = asyncio.get_running_loop()
        while (line := self._take_line()) is None:
            if self._ended:  # Ctrl-D on an empty line: no line, not an empty one
                return None
            ready: asyncio.Future[None] = loop.create_future()
            try:
                loop.add_reader(descriptor, _wake, ready)
            except (OSError, ValueError):
                # A regular file (or /dev/null) cannot be polled, and never makes us wait.
                self._read(descriptor)
                continue
            try:
                await ready
            finally:
                loop.remove_reader(descriptor)
            self._read(descriptor)
        return line

    async def line(self) -> str:
        """An answer: the line stripped and lower-case; "" (no) when the input has ended."""
        return ((await self.text()) or "").strip().lower()
