"""The loop's adapters for a task nobody watches: edits written, nobody asked, every event
kept as `agentls run -p --output-format stream-json` prints it (the task's trajectory); a
subagent's events carry its id (`subagent`) and the `agent` call's (`parent_tool_use_id`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..disk import files
from ..disk.landing import land_on_disk
from ..disk.paths import relative
from ..interfaces import Change, Decision, Landed

NOBODY_TO_ASK = "nobody can be asked in a batch: a permission rule asks about this"


class Events:
    """The task's events, in order; consecutive text deltas joined into one event."""

    def __init__(self, live: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.live = live

    def send(self, kind: str, **fields: Any) -> None:
        last = self.events[-1] if self.events else None
        if (
            kind == "text"
            and last is not None
            and last["type"] == "text"
            and last.get("subagent") == fields.get("subagent")  # a subagent's text is its own
        ):
            last["text"] += fields["text"]
            return
        event = {"type": kind, **fields}
        self.events.append(event)
        if self.live is not None and kind == "step":
            self.live(event)


class BatchWorkspace:
    """The task's tree on disk: every edit written, but one a permission rule asks about
    (`Change.reviewed` in the acceptEdits mode a batch runs in), which nobody can allow."""

    def __init__(self, root: Path, events: Events) -> None:
        self.root = root
        self.events = events

    async def read_text(self, path: Path) -> str:
        return files.read_text(self.root, path)

    def open_documents(self) -> dict[Path, str]:
        return {}

    async def propose(self, change: Change) -> Landed:
        if change.reviewed:
            landed = Landed(False, None, NOBODY_TO_ASK)
        else:
            landed = land_on_disk(self.root, change)
        path = relative(self.root, change.path)
        self.events.send("edit", path=path, applied=landed.applied, reason=landed.rejected_reason)
        return landed


class BatchApprover:
    """Nobody to ask: what would be asked is refused (a command an ask rule names, a
    project's hooks and MCP servers, a plan)."""

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        return "deny"

    async def approve_plan(self, plan: str) -> bool:
        return False

    async def approve_project(self, what: str) -> bool:
        return False
