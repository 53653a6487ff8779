"""The loop's `Progress` as a stream of events, each a JSON object (`agentls run -p
--output-format stream-json` prints them; a batch keeps them as the task's trajectory). A
subagent's events carry its id (`subagent`) and, as Claude Code's do, the id of the `agent`
call that started it (`parent_tool_use_id`)."""

from __future__ import annotations

from typing import Any, Protocol

from ..interfaces import PlanItem, SubagentShown


class EventSink(Protocol):
    def send(self, kind: str, **fields: Any) -> None: ...


class EventProgress:
    def __init__(self, events: EventSink) -> None:
        self.events = events
        self.tag: dict[str, str] = {}
        """What names a subagent's events."""

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

    def notice(self, text: str) -> None:
        self._send("note", text=text)

    def subagent(self, shown: SubagentShown) -> SubagentEvents:
        return SubagentEvents(self.events, shown)


class SubagentEvents(EventProgress):
    def __init__(self, events: EventSink, shown: SubagentShown) -> None:
        super().__init__(events)
        self.tag = {"subagent": shown.id, "parent_tool_use_id": shown.parent_step}
        self._send(
            "subagent", state="started", agent_type=shown.type, description=shown.description
        )

    def finished(self, ok: bool, detail: str) -> None:
        self._send("subagent", state="succeeded" if ok else "failed", detail=detail)
