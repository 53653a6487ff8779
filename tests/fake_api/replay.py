"""Answers a real server gave, played back byte for byte: `recorded(name)` is a turn either
fake (`FakeAnthropic`, `FakeOpenAI`) sends as it was received, so the adapters meet the real
server's exact wire shapes (its comments, its error events, its usage-only chunks), not ours.

The recordings are in `recordings/` (for now llama.cpp's `llama-server`, both of its formats):
each an HTTP answer's status, content type and body as `tests/real_server/record.py` received
them from the real server, and the request that got it. A recording may end in a `silence`:
the connection held open without a byte, as a server holding back output does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).parent / "recordings"


@dataclass(frozen=True)
class Replay:
    """A recorded answer: its status, content type and body; `silence`: seconds the
    connection then stays open without a byte before it is closed (None: the body ends as
    it did)."""

    status: int
    content_type: str
    body: bytes
    silence: float | None = None

    def events(self) -> list[bytes]:
        """The body cut after each blank line (each server-sent event a write of its own)."""
        pieces = self.body.split(b"\n\n")
        events = [piece + b"\n\n" for piece in pieces[:-1]]
        return [*events, pieces[-1]] if pieces[-1] else events

    def cut(self, events: int, silence: float | None = None) -> Replay:
        """The first `events` events only, then `silence` (None: the body ends there)."""
        body = b"".join(self.events()[:events])
        return Replay(self.status, self.content_type, body, silence)


def recorded(name: str) -> Replay:
    """The recording `recordings/NAME.json` as a turn."""
    saved = load(name)
    answer = saved["answer"]
    return Replay(answer["status"], answer["content_type"], answer["body"].encode())


def load(name: str) -> dict[str, Any]:
    """A recording as saved: `request` (the path and body sent), `answer`, `server`."""
    loaded: dict[str, Any] = json.loads((RECORDINGS / f"{name}.json").read_text())
    return loaded
