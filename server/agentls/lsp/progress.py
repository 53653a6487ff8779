"""Reporting a task to the editor: `$/progress` for each tool step, `agent/*` notifications
for the streamed text, the steps' outcomes and the plan (docs/protocol.md defines them)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..interfaces import PlanItem, SubagentShown

TEXT = "agent/text"
STEP = "agent/step"
OUTPUT = "agent/output"
PLAN = "agent/plan"
SUBAGENT = "agent/subagent"

TAIL_LINES = 10
TAIL_CHARS = 2000
TAILED_TOOLS = ("bash",)
"""The steps whose output's end a client shows under the step: a command's."""


def output_tail(output: str) -> str:
    """The last lines of a command's output (already cut to the output limit, redacted)."""
    tail = "\n".join(output.rstrip("\n").splitlines()[-TAIL_LINES:])
    return tail[-TAIL_CHARS:]


def plan_line(items: list[PlanItem]) -> str:
    """The plan in one progress message: how far it is, and the item at hand."""
    done = sum(item.status == "completed" for item in items)
    current = next((i for i in items if i.status == "in_progress"), None) or next(
        (i for i in items if i.status == "pending"), None
    )
    return f"plan {done}/{len(items)}" + (f": {current.content}" if current else "")


def client_supports_progress(server: LanguageServer) -> bool:
    window = server.client_capabilities.window
    return bool(window and window.work_done_progress)


class LspProgress:
    """One task's progress. `token` is None when the client has no progress support."""

    def __init__(self, server: LanguageServer, token: types.ProgressToken | None) -> None:
        self.server = server
        self.token = token
        self._turn_text: list[str] = []
        self._tag: dict[str, object] = {}
        """What names a subagent's notifications: its id and its parent step's."""

    def _notify(self, method: str, params: dict[str, object]) -> None:
        self.server.protocol.notify(method, {"token": self.token, **self._tag, **params})

    @classmethod
    async def start(
        cls,
        server: LanguageServer,
        client_token: types.ProgressToken | None,
        title: str,
        on_cancel: Callable[[], object],
    ) -> LspProgress:
        token = client_token
        if token is None and client_supports_progress(server):
            token = f"agentls-{uuid.uuid4()}"
            await server.work_done_progress.create_async(token)
        progress = cls(server, token)
        if token is not None:
            server.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title="agent", message=title, cancellable=True)
            )
            # pygls cancels this future when the client sends window/workDoneProgress/cancel.
            server.work_done_progress.tokens[token].add_done_callback(
                lambda future: on_cancel() if future.cancelled() else None
            )
        return progress

    def _report(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, cancellable=True)
            )

    def step(self, tool: str, summary: str) -> None:
        self._flush_text()
        message = f"{tool}: {summary}" if summary else tool
        self._report(message)
        self._notify(STEP, {"tool": tool, "summary": summary, "state": "started"})

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        done: dict[str, object] = {
            "tool": tool,
            "summary": summary,
            "state": "succeeded" if ok else "failed",
            "detail": detail,
        }
        if tool in TAILED_TOOLS and output:
            done["outputTail"] = output_tail(output)
        self._notify(STEP, done)

    def output(self, lines: str) -> None:
        self._notify(OUTPUT, {"text": lines})

    def plan(self, items: list[PlanItem]) -> None:
        self._report(plan_line(items))
        self._notify(PLAN, {"items": [item.as_dict() for item in items]})

    def steered(self, text: str) -> None:
        self._flush_text()
        self._report(f"added to the task: {text}")

    def notice(self, text: str) -> None:
        self._flush_text()
        self._report(text)

    def text(self, delta: str) -> None:
        self._turn_text.append(delta)
        self._notify(TEXT, {"text": delta})

    def subagent(self, shown: SubagentShown) -> LspSubagentProgress:
        return LspSubagentProgress(self.server, self.token, shown)

    def _flush_text(self) -> None:
        """The model's text of one turn, also as a log message for clients without agent/text."""
        if self._turn_text:
            self.server.window_log_message(
                types.LogMessageParams(type=types.MessageType.Log, message="".join(self._turn_text))
            )
            self._turn_text.clear()

    def end(self, message: str) -> None:
        self._flush_text()
        if self.token is None:
            return
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        # pygls never forgets a token; a reused client token would stay cancelled.
        self.server.work_done_progress.tokens.pop(self.token, None)


class LspSubagentProgress(LspProgress):
    """A subagent's progress: the task's notifications, each naming the subagent and the
    `agent` step that started it, between an `agent/subagent` start and end. No `$/progress`
    of its own: the task's one line follows the task's steps."""

    def __init__(
        self, server: LanguageServer, token: types.ProgressToken | None, shown: SubagentShown
    ) -> None:
        super().__init__(server, token)
        self._tag = {"subagent": shown.id, "parentStep": shown.parent_step}
        self._notify(
            SUBAGENT,
            {
                "state": "started",
                "type": shown.type,
                "description": shown.description,
                "depth": shown.depth,
            },
        )

    def _report(self, message: str) -> None:
        pass

    def _flush_text(self) -> None:
        self._turn_text.clear()

    def finished(self, ok: bool, detail: str) -> None:
        self._notify(SUBAGENT, {"state": "succeeded" if ok else "failed", "detail": detail})
