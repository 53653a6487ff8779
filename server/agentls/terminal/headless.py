"""`agentls run -p TASK`: one task for a script or CI, nobody to ask. Output formats:

- `text`: the model's final answer on stdout, the outcome line on stderr;
- `json`: one object at the end, the `agent.runTask` answer's shape (docs/protocol.md);
- `stream-json`: one JSON object per line per event (`text`, `step`, `output`, `plan`,
  `steered`, `edit`, `usage`), the last one `outcome`.

Nobody can be asked, so the policy is fixed by the flags: with `--yes` every edit is written
and every command run; without, edits are declined and only the `allowedCommands` run, and
the model is told that no one could approve the rest."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal, TextIO

from ..disk.landing import land_on_disk
from ..disk.paths import relative
from ..extensions.mcp_user import Answer
from ..interfaces import Change, Decision, Landed, PlanItem
from .adapters import DiskWorkspace

OutputFormat = Literal["text", "json", "stream-json"]

NOBODY_TO_ASK = "nobody could approve it: agentls run -p without --yes"


class Events:
    """Each event as one line of JSON (stream-json), or nothing (text, json)."""

    def __init__(self, stream: TextIO, streaming: bool) -> None:
        self.stream = stream
        self.streaming = streaming

    def send(self, kind: str, **fields: Any) -> None:
        if self.streaming:
            self.stream.write(json.dumps({"type": kind, **fields}, ensure_ascii=False) + "\n")
            self.stream.flush()


class HeadlessProgress:
    def __init__(self, events: Events) -> None:
        self.events = events

    def step(self, tool: str, summary: str) -> None:
        self.events.send("step", state="started", tool=tool, summary=summary)

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        state = "succeeded" if ok else "failed"
        self.events.send(
            "step", state=state, tool=tool, summary=summary, detail=detail, result=output
        )

    def output(self, lines: str) -> None:
        self.events.send("output", text=lines)

    def text(self, delta: str) -> None:
        self.events.send("text", text=delta)

    def plan(self, items: list[PlanItem]) -> None:
        self.events.send("plan", items=[item.as_dict() for item in items])

    def steered(self, text: str) -> None:
        self.events.send("steered", text=text)


class HeadlessWorkspace(DiskWorkspace):
    def __init__(self, root: Path, yes: bool, events: Events) -> None:
        super().__init__(root)
        self.yes = yes
        self.events = events

    async def propose(self, change: Change) -> Landed:
        landed = land_on_disk(self.root, change) if self.yes else Landed(False, None, NOBODY_TO_ASK)
        path = relative(self.root, change.path)
        reason = landed.rejected_reason
        self.events.send("edit", path=path, applied=landed.applied, reason=reason)
        return landed


class HeadlessApprover:
    """Commands that would be asked are denied: `--yes` allows them all before this is asked."""

    async def approve(self, command: str, unsandboxed: bool = False) -> Decision:
        return "deny"


class HeadlessMcpUser:
    """A sign-in URL goes to stderr (a script's log; the browser opens too); a server's
    question is declined, nobody being there to answer it."""

    def open_url(self, server: str, url: str, why: str) -> None:
        sys.stderr.write(f"agentls: {why}: open {url}\n")
        sys.stderr.flush()

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        return Answer(
            "decline",
            reason=f"the MCP server {server} asked a question ({message}), but agentls run -p "
            "has nobody to answer it",
        )
