"""`agentls run -p TASK`: one task for a script or CI, nobody to ask. Output formats:

- `text`: the model's final answer on stdout, the outcome line on stderr;
- `json`: one object at the end, the `agent.runTask` answer's shape (docs/protocol.md);
- `stream-json`: one JSON object per line per event (`text`, `step`, `output`, `plan`,
  `steered`, `edit`, `subagent`, `usage`), the last one `outcome`; a subagent's carry its
  id (`subagent`) and the `agent` call's (`parent_tool_use_id`).

Nobody can be asked, so the policy is fixed by the flags: with `--yes` every edit is written
and every command run but those a permission rule asks for (`HeadlessApprover`); without,
edits are declined and only the `allowedCommands` run, and the model is told that no one
could approve the rest. What the project asked to run (its MCP servers, its hooks) is not
approved by anyone: the answer's `notApproved` (json), a `note` event (stream-json) or a
line on stderr (text) says so. What agentls tells the user on the way (a language server or an
MCP server that is out) is a `note` event (stream-json), else a line on stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal, TextIO

from ..disk.landing import land_on_disk
from ..disk.paths import relative
from ..extensions.mcp_user import Answer
from ..interfaces import Change, Decision, Landed, Unanswered
from ..visible import visible
from .adapters import DiskWorkspace

OutputFormat = Literal["text", "json", "stream-json"]

NOBODY_TO_ASK = "nobody could approve it: agentls run -p without --yes"


class Events:
    """Each event as one line of JSON (stream-json); in text and json, only a `note` (what
    agentls tells the user: a language server or an MCP server that is out), as a line on
    stderr, stdout keeping the answer alone."""

    def __init__(self, stream: TextIO, streaming: bool) -> None:
        self.stream = stream
        self.streaming = streaming

    def send(self, kind: str, **fields: Any) -> None:
        if self.streaming:
            self.stream.write(json.dumps({"type": kind, **fields}, ensure_ascii=False) + "\n")
            self.stream.flush()
        elif kind == "note" and isinstance(fields.get("text"), str):
            sys.stderr.write(visible(fields["text"], lines=False) + "\n")
            sys.stderr.flush()


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
    """Nobody can be asked. `--yes` lets every edit and command pass before this is asked
    (`approveCommands: always`): it answers for the user, never for a permission rule. So a
    command an ask rule names, or one a bash rule cannot see through, is refused, and the
    model told why; the project's servers and hooks stay unapproved, and the answer says so."""

    def __init__(self, yes: bool, events: Events) -> None:
        self.yes = yes
        self.events = events
        self.not_approved: list[str] = []
        """What the project asked to run that nobody could approve, in the user's words."""

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        why = "a permission rule asks for it, which --yes never answers" if self.yes else ""
        raise Unanswered(
            f"Refused: nobody could approve it (agentls run -p{' --yes' if self.yes else ''}: "
            f"{why or 'without --yes'})."
        )

    async def approve_plan(self, plan: str) -> bool:
        # The one who passed --yes to a plan-mode run wants the plan carried out; without
        # it, the plan is the answer.
        return self.yes

    async def approve_project(self, what: str) -> bool:
        note = f"not approved, nobody could (agentls run -p): {what}"
        if note not in self.not_approved:
            self.not_approved.append(note)
            self.events.send("note", text=note)
        return False


class HeadlessMcpUser:
    """A sign-in URL goes to stderr (a script's log; the browser opens too); a server's
    question is declined, nobody being there to answer it, and the run's output says which
    server asked what: a line on stderr (text), an `elicitation` event (stream-json), the
    answer's `elicitations` (json)."""

    def __init__(self, events: Events, output_format: OutputFormat) -> None:
        self.events = events
        self.output_format = output_format
        self.declined: list[dict[str, str]] = []
        """Each question declined: `server`, `message`, `action` (`decline`)."""

    def open_url(self, server: str, url: str, why: str) -> None:
        sys.stderr.write(f"agentls: {why}: open {url}\n")
        sys.stderr.flush()

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        # The server's words, bounded: it could send a page of them, or escapes.
        shown = message if len(message) <= _QUESTION_SHOWN else message[:_QUESTION_SHOWN] + "..."
        declined = {"server": server, "message": shown, "action": "decline"}
        self.declined.append(declined)
        self.events.send("elicitation", **declined)
        if self.output_format == "text":
            sys.stderr.write(
                f"agentls: the MCP server {server} asked a question, declined (nobody can "
                f"answer under agentls run -p): {visible(shown, lines=False)}\n"
            )
            sys.stderr.flush()
        return Answer(
            "decline",
            reason=f"the MCP server {server} asked a question ({message}), but agentls run -p "
            "has nobody to answer it",
        )


_QUESTION_SHOWN = 500
"""Characters of a server's question that the run's output repeats."""
