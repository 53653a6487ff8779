"""The session store: each conversation saved as it goes, so a restarted editor (or
`agentls run --continue`) picks it up where it stopped.

One append-only JSON Lines file per session under `$XDG_STATE_HOME/agentls/sessions/
<workspace key>/<id>.jsonl` (folders 0700, files 0600). Each line is written whole and
flushed at every step boundary, so a crash loses at most the step in flight; a line cut
by a crash is skipped when the file is read. Secret values (from the environment and the
`.env` files) are replaced by `[redacted]` before anything is written.

Records:
- `{"type": "session", "id", "created", "root"}`: the first line;
- `{"type": "task", "title", "request", "time"}`: a task started (`request`: the user's
  words, which a compaction keeps);
- `{"type": "messages", "keep": n, "append": [...], "time"}`: the conversation is its first
  `n` messages followed by these (the loop appends at the end, and rewrites the end when a
  cancelled task is closed, a compaction replaces it, or old results are elided).

The API (`SessionStore.list_sessions/load/create/open`, `SessionLog.task/sync`) knows
nothing of LSP: every front end (LSP, the terminal, ACP) uses the same.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import redaction
from ..config import environment
from ..counts import counted
from ..disk.state import append_line, private_dir, state_base, state_dir

Message = dict[str, Any]
_MESSAGES = '{"type": "messages"'
"""How a conversation record's line starts (json.dumps keeps the keys in order)."""


@dataclass
class SessionInfo:
    id: str
    title: str
    updated: float
    tasks: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "updated": self.updated,
            "tasks": self.tasks,
            "description": self.description(),
        }

    def description(self, now: float | None = None) -> str:
        """The session for the user: `“fix the parser” (1 task, 5 minutes ago)`."""
        return f"“{self.title}” ({counted(self.tasks, 'task')}, {ago(self.updated, now)})"


def ago(stamp: float, now: float | None = None) -> str:
    """How long ago `stamp` was, as a person says it: `just now`, `5 minutes ago`."""
    seconds = max((time.time() if now is None else now) - stamp, 0)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            return f"{counted(int(seconds // size), unit)} ago"
    return "just now"


@dataclass
class StoredSession:
    info: SessionInfo
    messages: list[Message]
    last_request: str = ""


def _fingerprint(message: Message) -> tuple[Any, ...]:
    """Cheap to compute, and different after any change the loop makes to a message: it
    adds blocks to the last one, and replaces whole blocks (a shortened old result) or
    whole messages, never a block's fields in place."""
    content = message.get("content")
    if not isinstance(content, list):
        return (id(message), message.get("role"), content)
    # Identities, and sizes too: an object freed by a rewind may lend its id to a new one.
    blocks = [(id(b), *map(_size, b.values())) for b in content]
    return (id(message), message.get("role"), id(content), *blocks)


def _size(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_size(item) for item in value.values())
    return len(value) if isinstance(value, (str, list)) else 0


def _redacted(value: Any, hidden: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redaction.redact(value, hidden)
    if isinstance(value, list):
        return [_redacted(item, hidden) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item, hidden) for key, item in value.items()}
    return value


class SessionLog:
    """The open file of one session, appended to as the conversation grows."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.id = path.stem
        self.root = root
        self._saved: list[tuple[Any, ...]] = []
        self._secrets = environment.load(root).secrets

    def _append(self, record: dict[str, Any]) -> None:
        append_line(self.path, json.dumps(_redacted(record, self._secrets), ensure_ascii=False))

    def task(self, title: str, request: str) -> None:
        """A task starts: its title is the session's title if it is the first."""
        # A key added to .env since the last task is hidden from then on.
        self._secrets = environment.load(self.root).secrets
        self._append({"type": "task", "title": title, "request": request, "time": time.time()})

    def sync(self, messages: list[Message]) -> None:
        """Write what changed in the conversation since the last sync."""
        prints = [_fingerprint(m) for m in messages]
        keep = 0
        for old, new in zip(self._saved, prints, strict=False):
            if old != new:
                break
            keep += 1
        if keep == len(prints) == len(self._saved):
            return
        self._append(
            {"type": "messages", "keep": keep, "append": messages[keep:], "time": time.time()}
        )
        self._saved = prints

    def resumed(self, messages: list[Message]) -> None:
        """The conversation as loaded: only what changes after it is written."""
        self._saved = [_fingerprint(m) for m in messages]


class SessionStore:
    """The saved sessions of one workspace."""

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self.root = root
        self.folder = private_dir(folder) if folder else state_dir("sessions", root)

    def create(self) -> SessionLog:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        log = SessionLog(self.folder / f"{stamp}-{secrets.token_hex(3)}.jsonl", self.root)
        log._append(
            {"type": "session", "id": log.id, "created": time.time(), "root": str(self.root)}
        )
        return log

    def list_sessions(self) -> list[SessionInfo]:
        """The sessions that hold a task, the most recently updated first."""
        found = [self._read(path, messages=False).info for path in self.folder.glob("*.jsonl")]
        # A session whose first task never started (no key, say) holds nothing to resume.
        return sorted(
            (info for info in found if info.tasks), key=lambda info: info.updated, reverse=True
        )

    def latest(self) -> str | None:
        sessions = self.list_sessions()
        return sessions[0].id if sessions else None

    def load(self, session_id: str) -> StoredSession:
        """Raises KeyError for an unknown id."""
        return self._read(self._path(session_id))

    def open(self, session_id: str) -> tuple[SessionLog, StoredSession]:
        """The session as saved, and its log to go on appending to."""
        stored = self.load(session_id)
        log = SessionLog(self._path(session_id), self.root)
        log.resumed(stored.messages)
        return log, stored

    def _path(self, session_id: str) -> Path:
        return _saved(self.folder, session_id)

    def _read(self, path: Path, messages: bool = True) -> StoredSession:
        """The session in `path`; with `messages` false, its list entry only (the
        conversation's records, nearly all of the file, are not parsed)."""
        conversation: list[Message] = []
        title, request, tasks = "", "", 0
        with open(path, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if not messages and line.startswith(_MESSAGES):
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut by a crash
                if not isinstance(record, dict):
                    continue
                if record.get("type") == "task":
                    tasks += 1
                    title = title or str(record.get("title", ""))
                    request = str(record.get("request", ""))
                elif record.get("type") == "messages":
                    del conversation[int(record.get("keep", 0)) :]
                    conversation.extend(record.get("append", []))
        info = SessionInfo(path.stem, title, path.stat().st_mtime, tasks)
        return StoredSession(info, conversation, request)


def _saved(folder: Path, session_id: str) -> Path:
    """The file of the session `session_id` in `folder`; raises KeyError when there is none."""
    path = folder / f"{session_id}.jsonl"
    # An id is a file name we made: nothing that could name another folder.
    bad = not session_id or "/" in session_id or "\\" in session_id or session_id.startswith(".")
    if bad or path.is_symlink() or not path.is_file():
        raise KeyError(session_id)
    return path


def delete_anywhere(session_id: str) -> None:
    """Remove the saved session `session_id` from whichever workspace's folder holds it (ACP's
    `session/delete` names no folder). Raises KeyError for an unknown id."""
    base = state_base() / "sessions"
    for folder in sorted(base.iterdir()) if base.is_dir() else ():
        try:
            path = _saved(folder, session_id)
        except KeyError:
            continue
        path.unlink()
        return
    raise KeyError(session_id)
