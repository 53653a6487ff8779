"""How many tasks may run now: the in-flight cap, lowered for a while after a 429, and the
budget."""

from __future__ import annotations

import time
from collections.abc import Callable

RECOVERY_SECONDS = 30.0
"""After a 429, one more task may run again per this many seconds without another."""


class InFlight:
    """At most `cap` tasks at once. A 429 halves the number allowed and stops starting
    tasks until its Retry-After has passed; quiet time gives the room back, one task at a
    time (a provider's limit is per minute: all of them back at once would hit it again)."""

    def __init__(self, cap: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.cap = max(1, cap)
        self.allowed = self.cap
        self.clock = clock
        self.paused_until = 0.0
        self._last_change = clock()

    def rate_limited(self, retry_after: float) -> None:
        now = self.clock()
        if now - self._last_change > 1.0:  # one burst of 429s lowers it once
            self.allowed = max(1, self.allowed // 2)
        self._last_change = now
        self.paused_until = max(self.paused_until, now + max(retry_after, 1.0))

    def room(self, running: int) -> int:
        """How many more tasks may start now."""
        now = self.clock()
        while self.allowed < self.cap and now - self._last_change >= RECOVERY_SECONDS:
            self.allowed += 1
            self._last_change += RECOVERY_SECONDS
        if now < self.paused_until:
            return 0
        return max(0, self.allowed - running)

    def wake_in(self) -> float | None:
        """Seconds until the room may change by itself (a pause ends, a task comes back)."""
        now = self.clock()
        if now < self.paused_until:
            return self.paused_until - now
        if self.allowed < self.cap:
            return max(0.1, self._last_change + RECOVERY_SECONDS - now)
        return None


class Budget:
    """Dollars this run may spend; None: no limit. Spent once the finished tasks' cost
    reaches it: what runs then may finish, nothing more starts."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent = 0.0

    def add(self, cost: float | None) -> None:
        self.spent += cost or 0.0

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.spent >= self.limit
