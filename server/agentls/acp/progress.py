"""A task's progress as ACP session updates: the streamed text, a tool call per step."""

from __future__ import annotations

import itertools
from contextvars import ContextVar
from pathlib import Path

import acp
from acp.schema import ToolCallLocation, ToolKind

from ..interfaces import PlanItem, SubagentShown
from .updates import Updates

KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "bash": "execute",
    "grep": "search",
    "list_files": "search",
}
"""How the client draws each tool's step; a tool not named here is "other"."""

_FILE_TOOLS = ("read_file", "write_file", "edit_file")

_ids = itertools.count(1)

LIVE_OUTPUT_CHARS = 4000
"""How much of a running command's output its step shows as it runs (the end shows all)."""

SUBAGENT_CALL: ContextVar[str | None] = ContextVar("acp_subagent_call", default=None)
"""The tool call of the subagent whose work runs in this context: its approvals and edits
are shown on it. Set where the subagent starts, so its own steps (tasks made from there)
inherit it and the task's steps do not."""


def step_in_flight(progress: AcpProgress) -> str | None:
    """The tool call a question or a diff belongs to: the subagent's, else the task's step."""
    return SUBAGENT_CALL.get() or progress.current


class AcpProgress:
    """One task's steps. The loop runs one tool at a time, so the step in flight is the
    one an edit (`AcpWorkspace`) or an approval (`AcpApprover`) belongs to."""

    def __init__(self, updates: Updates, root: Path) -> None:
        self.updates = updates
        self.root = root
        self.current: str | None = None
        self._output = ""

    def step(self, tool: str, summary: str) -> None:
        if tool == "agent":  # the subagent's own tool call shows it, from its start
            self.current = None
            return
        self.current = f"agentls-{next(_ids)}"
        self._output = ""
        locations = None
        if tool in _FILE_TOOLS and summary:
            locations = [ToolCallLocation(path=str(self.root / summary))]
        self.updates.send(
            acp.start_tool_call(
                self.current,
                f"{tool} {summary}".strip(),
                kind=KINDS.get(tool, "other"),
                status="in_progress",
                locations=locations,
            )
        )

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        if self.current is None or tool == "agent":
            return
        # A command's output is what the user wants to see; for the rest, how it ended (an
        # edit's diff is on the step already).
        shown = output if tool == "bash" else detail
        content = [acp.tool_content(acp.text_block(shown))] if shown else None
        self.updates.send(
            acp.update_tool_call(
                self.current, status="completed" if ok else "failed", content=content
            )
        )
        self.current = None

    def end_open_step(self, status: str) -> None:
        """End the step a cancel (or a failure) cut short: a client shows a tool call left
        without an end as running for ever."""
        if self.current is None:
            return
        said = "Cancelled." if status == "cancelled" else "Stopped: the task ended here."
        content = [acp.tool_content(acp.text_block(said))]
        self.updates.send(acp.update_tool_call(self.current, status="failed", content=content))
        self.current = None

    def output(self, lines: str) -> None:
        """The running command's output so far (its last lines), as the step's content."""
        if self.current is None:
            return
        self._output = (self._output + lines)[-LIVE_OUTPUT_CHARS:]
        content = [acp.tool_content(acp.text_block(self._output))]
        self.updates.send(acp.update_tool_call(self.current, content=content))

    def text(self, delta: str) -> None:
        self.updates.send(acp.update_agent_message_text(delta))

    def plan(self, items: list[PlanItem]) -> None:
        self.updates.send(
            acp.update_plan([acp.plan_entry(item.content, status=item.status) for item in items])
        )

    def steered(self, text: str) -> None:
        self.updates.send(acp.update_user_message_text(text))

    def notice(self, text: str) -> None:
        # Not the answer: a thought, which a client shows apart from it.
        self.updates.send(acp.update_agent_thought_text(f"({text})\n"))

    def subagent(self, shown: SubagentShown) -> AcpSubagentProgress:
        return AcpSubagentProgress(self.updates, shown)


class AcpSubagentProgress:
    """A subagent as one tool call (kind `think`) of the task's session: its text and steps
    stream into the call's content, its id as a child session in `_meta` (the shape of the
    ACP subagents RFD), its questions go to the task's session on this call."""

    def __init__(self, updates: Updates, shown: SubagentShown) -> None:
        self.updates = updates
        self.call = f"agentls-{shown.id}"
        self._log = ""
        start = acp.start_tool_call(
            self.call, f"{shown.type}: {shown.description}", kind="think", status="in_progress"
        )
        start.field_meta = {
            "agentls": {
                "subagentSessionId": f"{updates.session_id}/{shown.id}",
                "name": shown.type,
                "task": shown.description,
                "parentToolCallId": shown.parent_step,
            }
        }
        updates.send(start)
        SUBAGENT_CALL.set(self.call)

    def _add(self, text: str) -> None:
        self._log = (self._log + text)[-LIVE_OUTPUT_CHARS:]
        content = [acp.tool_content(acp.text_block(self._log))]
        self.updates.send(acp.update_tool_call(self.call, content=content))

    def step(self, tool: str, summary: str) -> None:
        self._add(f"\n▸ {tool} {summary}".rstrip() + "\n")

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        self._add(f"  {'✓' if ok else '✗'} {detail}\n")

    def output(self, lines: str) -> None:
        pass  # its step's end says how it went; a subagent's command output stays its own

    def text(self, delta: str) -> None:
        self._add(delta)

    def plan(self, items: list[PlanItem]) -> None:
        done = sum(item.status == "completed" for item in items)
        self._add(f"\n(plan {done}/{len(items)})\n")

    def steered(self, text: str) -> None:
        pass

    def notice(self, text: str) -> None:
        self._add(f"\n({text})\n")

    def subagent(self, shown: SubagentShown) -> AcpSubagentProgress:
        return AcpSubagentProgress(self.updates, shown)

    def finished(self, ok: bool, detail: str) -> None:
        self._add(f"\n[{detail}]")
        self.updates.send(acp.update_tool_call(self.call, status="completed" if ok else "failed"))
