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
from ..interfaces import Change, Decision, Landed, PlanItem, SubagentShown

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


class BatchProgress:
    def __init__(self, events: Events) -> None:
        self.events = events
        self.tag: dict[str, str] = {}
        """What names a subagent's events (as `agentls run -p`'s): its id, and the id of the
        `agent` call that started it."""

    def _send(self, kind: str, **fields: Any) -> None:
        self.events.send(kind, **fields, **self.tag)

    def step(self, tool: str, summary: str) -> None:
        self._send("step", state="started", tool=tool, summary=summary)

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        state = "succeeded" if ok else "failed"
        self._send("step", state=state, tool=tool, summary=summary, detail=detail, result=output)

    def output(self, lines: str) -> None:
        self._send("output", text=lines)

    def text(self, delta: str) -> None:
        self._send("text", text=delta)

    def plan(self, items: list[PlanItem]) -> None:
        self._send("plan", items=[item.as_dict() for item in items])

    def steered(self, text: str) -> None:
        self._send("steered", text=text)

    def subagent(self, shown: SubagentShown) -> BatchSubagent:
        return BatchSubagent(self.events, shown)


class BatchSubagent(BatchProgress):
    def __init__(self, events: Events, shown: SubagentShown) -> None:
        super().__init__(events)
        self.tag = {"subagent": shown.id, "parent_tool_use_id": shown.parent_step}
        self._send(
            "subagent", state="started", agent_type=shown.type, description=shown.description
        )

    def finished(self, ok: bool, detail: str) -> None:
        self._send("subagent", state="succeeded" if ok else "failed", detail=detail)


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

    async def approve(self, command: str, unsandboxed: bool = False) -> Decision:
        return "deny"

    async def approve_plan(self, plan: str) -> bool:
        return False

    async def approve_project(self, what: str) -> bool:
        return False
