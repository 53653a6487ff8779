"""Session updates sent in order: the loop reports synchronously, ACP sends asynchronously."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

log = logging.getLogger(__name__)


class UpdateSink(Protocol):
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None: ...


class Updates:
    """A queue of one session's updates, sent one after the other by one task, so the
    client sees them in the order the loop made them."""

    def __init__(self, client: UpdateSink, session_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None

    def send(self, update: Any) -> None:
        self._queue.put_nowait(update)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while not self._queue.empty():
            update = self._queue.get_nowait()
            try:
                await self.client.session_update(self.session_id, update)
            except Exception as error:  # a client that is gone must not break the task
                log.warning("session/update failed: %s", error)

    async def flush(self) -> None:
        """Wait until every update so far is sent (before a prompt is answered)."""
        while self._sender is not None and not self._sender.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(self._sender)
