"""One request at a time per document: a newer one answers every older one still running at
once and aborts its model call; one superseded while it waits out the debounce calls no
model at all."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class _Attempt:
    def __init__(self) -> None:
        self.superseded = asyncio.Event()
        self.call: asyncio.Future[Any] | None = None

    def supersede(self) -> None:
        self.superseded.set()
        if self.call is not None:
            self.call.cancel()  # its `async with` closes the connection


class Supersession:
    def __init__(self) -> None:
        self._latest: dict[Hashable, _Attempt] = {}

    def supersede(self, key: Hashable) -> None:
        """Answer the request running for `key`, if any, without a newer one (a closed
        document)."""
        attempt = self._latest.pop(key, None)
        if attempt is not None:
            attempt.supersede()

    async def run(
        self, key: Hashable, debounce: float, call: Callable[[], Awaitable[T]]
    ) -> T | None:
        """`call()`'s result, after `debounce` seconds without a newer request for `key`;
        None once a newer one came. Cancelled (`$/cancelRequest`), it cancels the call too."""
        self.supersede(key)
        attempt = self._latest[key] = _Attempt()
        try:
            if debounce > 0:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(attempt.superseded.wait(), debounce)
            if attempt.superseded.is_set():
                return None
            task = attempt.call = asyncio.ensure_future(call())
            try:
                await asyncio.wait({task})
            finally:
                task.cancel()  # a no-op once it is done
            return None if task.cancelled() else task.result()
        finally:
            if self._latest.get(key) is attempt:
                del self._latest[key]
