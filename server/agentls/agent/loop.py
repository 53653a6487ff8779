"""The agent loop: ask the model, run the tools it asks for, feed the results back.

It depends only on the interfaces in `interfaces.py`; front ends (LSP, terminal) wire them.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from ..disk.paths import PathError, resolve
from ..interfaces import (
    Block,
    CheckpointKind,
    Checkpoints,
    Journal,
    Model,
    ModelError,
    Progress,
    PromptTooLong,
    Turn,
    Usage,
)
from ..redaction import redact
from ..tools import ToolContext, offered, run_tool
from .context import ContextBudget, prompt_chars
from .memory import ProjectMemory
from .prompt import system_prompt

log = logging.getLogger(__name__)

Status = Literal["done", "cancelled", "failed", "step_limit"]

_CUT_OFF = "Your reply was cut off at the output token limit. Continue where you stopped."
_CUT_OFF_TOOL = (
    "Not run: your reply hit the output token limit, so this call may be incomplete. "
    "Send it again, in smaller pieces if it is long."
)
# The result of a tool call that a cancel cut short.
_UNFINISHED_CALL = (
    "Cancelled by the user; this tool call did not finish. If it was an edit under review, "
    "read the file again before relying on its content."
)


@dataclass
class Session:
    """The conversation, shared by consecutive tasks until the user starts a new one."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    budget: ContextBudget = field(default_factory=ContextBudget)
    steering: list[str] = field(default_factory=list)
    """Text the user added to the running task, for the model at the next step."""
    memory_noted: dict[str, str] = field(default_factory=dict)
    """Subfolders' memory files already in the conversation, by label, with their text."""
    journal: Journal | None = None
    """Where the conversation is saved as it goes (None: not saved)."""
    tasks: int = 0
    last_request: str = ""
    """The user's last request, word for word: a compaction keeps it whole."""

    @classmethod
    def resumed(
        cls, messages: list[dict[str, Any]], journal: Journal, tasks: int, last_request: str
    ) -> Session:
        """A saved session, to go on with. A server killed during a step left that step's
        tool calls unanswered; the API refuses such a conversation, so they are answered."""
        session = cls(messages, journal=journal, tasks=tasks, last_request=last_request)
        session.close_open_tool_calls()
        return session

    @property
    def id(self) -> str:
        return self.journal.id if self.journal is not None else ""

    def save(self) -> None:
        """Write what changed since the last save; a full disk must not stop the task."""
        if self.journal is not None:
            try:
                self.journal.sync(self.messages)
            except OSError as error:
                log.warning("the session could not be saved: %s", error)

    def begin_task(self, request: str) -> str:
        """Count a task in; its title (the request's first line) for lists and checkpoints."""
        self.tasks += 1
        self.last_request = request
        title = (request.strip().splitlines() or [""])[0][:80]
        if self.journal is not None:
            try:
                self.journal.task(title, request)
            except OSError as error:
                log.warning("the session could not be saved: %s", error)
        return title

    def add_user(self, blocks: list[Block]) -> None:
        # A task cancelled before the model answered leaves a user message last; the API
        # wants turns to alternate, so the next one joins it.
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": blocks})

    def checkpoint(self) -> tuple[int, int]:
        """Where the conversation stands: the number of messages, and of blocks in the last."""
        return len(self.messages), len(self.messages[-1]["content"]) if self.messages else 0

    def rewind(self, checkpoint: tuple[int, int]) -> None:
        count, blocks = checkpoint
        del self.messages[count:]
        if self.messages:
            del self.messages[-1]["content"][blocks:]

    def close_open_tool_calls(self) -> None:
        """Answer the tool calls of the last assistant turn that have no result yet.

        A task that ends early (cancelled, failed) leaves them; the API refuses a conversation
        with unanswered calls, so the next task needs them answered.
        """
        messages = self.messages
        if messages and messages[-1]["role"] == "assistant":
            self.add_user([])
        if len(messages) < 2 or messages[-2]["role"] != "assistant":
            return
        answered = {b.get("tool_use_id") for b in messages[-1]["content"]}
        calls = [b for b in messages[-2]["content"] if b.get("type") == "tool_use"]
        messages[-1]["content"].extend(
            _tool_result(c["id"], _UNFINISHED_CALL, True) for c in calls if c["id"] not in answered
        )
        if not messages[-1]["content"]:
            messages.pop()


CANCELLED_BY_USER = "Cancelled by the user."

_STEERED = "(The user adds, while you work on this task:)\n{text}"
_MEMORY_TOOLS = ("read_file", "edit_file", "write_file")
"""The tools after which a subfolder's AGENTS.md joins the result."""


@dataclass
class TaskResult:
    status: Status
    summary: str
    steps: int = 0
    edits_applied: int = 0
    edits_rejected: int = 0
    usage: Usage = field(default_factory=Usage)
    error_hint: str = ""
    edits_partly: int = 0
    refused: bool = False
    """The model declined the task (a front end that has a word for it says so: ACP)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "summary": self.summary,
            "steps": self.steps,
            "edits": {
                "applied": self.edits_applied,
                "rejected": self.edits_rejected,
                "partly": self.edits_partly,
            },
            "usage": self.usage.as_dict(),
        }


_COMPACT = (
    "Summarise our conversation so far for yourself, so that the work can go on from your "
    "summary alone: what the user asked for, the decisions made, the plan (your todo list, "
    "each item with its status, if you keep one), the files read or changed and their state "
    "now, what commands showed, and what is left to do. Write only the summary; call no tools."
)
COMPACTED = "(Our conversation so far, summarised to save context:)\n\n"
_LAST_REQUEST = "\n\nThe user's last request, word for word:\n"
_CHANGED = "\n\nFiles changed in this session (from agentls's checkpoints):\n"
_PLAN = "\n\nYour plan as you last wrote it (todo_write):\n"


def _for_the_user(detail: str) -> str:
    """A result's first sentence: what follows it ("Do not retry it; ask or take another
    way.") is advice written for the model."""
    sentence, stop, _ = detail.partition(". ")
    return sentence + "." if stop else detail


def _tool_result(tool_use_id: str, text: str, is_error: bool) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    if is_error:
        block["is_error"] = True
    return block


def _text_of(content: list[Block]) -> str:
    return "".join(b.get("text", "") for b in content if b.get("type") == "text").strip()


def _last_plan(messages: list[dict[str, Any]]) -> list[str]:
    """The items of the last todo_write call in the conversation, one line each."""
    for message in reversed(messages):
        for block in reversed(message["content"]):
            if block.get("type") == "tool_use" and block.get("name") == "todo_write":
                arguments = block.get("input")
                todos = arguments.get("todos") if isinstance(arguments, dict) else None
                if isinstance(todos, list):
                    return [
                        f"- [{item.get('status', '')}] {item.get('content', '')}"
                        for item in todos
                        if isinstance(item, dict)
                    ]
    return []


class Agent:
    def __init__(
        self,
        model: Model,
        tools: ToolContext,
        progress: Progress,
        session: Session,
        memory: ProjectMemory | None = None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.progress = progress
        self.session = session
        self.memory = memory
        # Fixed for the task, as prompt caching needs: the tools are the cached prefix's start.
        self.offered = offered(tools)
        self.schemas = [tool.schema() for tool in self.offered.values()]
        # Built once: the system prompt (and the memory in it) stays byte-stable for the task.
        self.system = system_prompt(tools.workspace.root, memory.prompt() if memory else "")
        self.checkpoints = checkpoints
        self._recording: asyncio.Future[None] | None = None

    async def run(self, task: str, request: str | None = None) -> TaskResult:
        """Run one task to its end; cancelling the awaiting task ends it as `cancelled`.

        `task` is the message to the model, `request` the user's own words (default: the
        task). The workspace is recorded before the task, before each step that may change
        files, and after it, so the task can be undone."""
        words = redact(request if request is not None else task, self.tools.secrets)
        title = self.session.begin_task(words)
        if self.checkpoints is not None:
            # Recorded while the model thinks; awaited before the first step that may change
            # files (a first checkpoint of a big workspace takes seconds).
            record = self.checkpoints.record(
                "task", self.session.id, self.session.tasks, None, title
            )
            self._recording = asyncio.ensure_future(record)
        try:
            return await self._run(task)
        finally:
            self.session.save()
            await self._checkpoint("end", None, title)

    async def _checkpoint(
        self,
        kind: CheckpointKind,
        step: int | None,
        label: str,
        touches: list[str] | None = None,
    ) -> None:
        if self.checkpoints is None:
            return
        if self._recording is not None:
            # Shielded: a cancel while waiting must not lose the task's checkpoint.
            await asyncio.shield(self._recording)
            self._recording = None
        session, task = self.session.id, self.session.tasks
        await self.checkpoints.record(kind, session, task, step, label, touches)

    async def _run(self, task: str) -> TaskResult:
        usage = Usage()
        steps = 0
        max_steps = self.tools.settings.max_steps

        def result(status: Status, summary: str, hint: str = "") -> TaskResult:
            edits = self.tools.edits
            return TaskResult(
                status,
                summary,
                steps,
                edits.applied,
                edits.rejected,
                usage,
                hint,
                edits_partly=edits.partly,
            )

        start = self.session.checkpoint()
        # The task may carry the editor's selection, which may hold a secret (a .env line).
        shown = redact(task, self.tools.secrets)
        self.session.add_user([{"type": "text", "text": shown}])
        try:
            while steps < max_steps:
                steps += 1
                turn = await self._ask()
                usage.add(turn.usage)
                # The API refuses an empty assistant turn in the history of a later request.
                content = turn.content or [{"type": "text", "text": "(empty reply)"}]
                self.session.messages.append({"role": "assistant", "content": content})
                self.session.save()
                calls = [b for b in turn.content if b.get("type") == "tool_use"]
                if turn.stop_reason == "refusal":
                    # A refused turn left in the history makes the next ones refused too.
                    self.session.rewind(start)
                    self.session.steering.clear()
                    declined = result("failed", "The model declined this task (refusal).")
                    declined.refused = True
                    return declined
                if not calls:
                    if turn.stop_reason == "max_tokens":
                        self.session.add_user([{"type": "text", "text": _CUT_OFF}])
                        continue
                    if self.session.steering:  # added as the model finished: not done yet
                        self.session.add_user(self._steering())
                        continue
                    return result("done", _text_of(turn.content))
                cut_off = turn.stop_reason == "max_tokens"
                self.session.add_user([])
                for call in calls:
                    block = await self._call(call, cut_off, steps)
                    self.session.messages[-1]["content"].append(block)
                    self.session.save()
                self.session.add_user(self._steering())
            return result("step_limit", f"Stopped after {max_steps} steps (the maxSteps setting).")
        except asyncio.CancelledError:
            self._interrupted("The user cancelled this task; do not go on with it unless asked.")
            return result("cancelled", CANCELLED_BY_USER)
        except ModelError as error:
            self._interrupted(f"This task stopped: {error}")
            return result("failed", str(error), error.hint)
        except Exception as error:  # a defect of ours must not leave the session unusable
            log.exception("the agent loop failed")
            self._interrupted(f"This task stopped: agentls failed ({type(error).__name__}).")
            return result(
                "failed",
                f"agentls failed: {type(error).__name__}: {error}",
                "See the agentls log; the conversation can go on.",
            )

    async def compact(self) -> TaskResult:
        """Replace the conversation by the model's summary of it; on failure keep it (old results
        shortened to fit the context budget stay shortened)."""
        if not self.session.messages:
            return TaskResult("done", "Nothing to compact yet.")
        self.session.close_open_tool_calls()
        before = self.session.checkpoint()
        self.session.add_user([{"type": "text", "text": _COMPACT}])
        try:
            turn = await self._ask()
        except BaseException as error:
            # Left in place, the request would join the user's next task.
            self.session.rewind(before)
            if isinstance(error, asyncio.CancelledError):
                return TaskResult("cancelled", CANCELLED_BY_USER, steps=1)
            if isinstance(error, ModelError):
                return TaskResult("failed", str(error), steps=1, error_hint=error.hint)
            raise
        summary = _text_of(turn.content)
        if not summary or turn.stop_reason in ("max_tokens", "refusal"):
            self.session.rewind(before)
            failure = "The model wrote no complete summary; nothing was compacted."
            return TaskResult("failed", failure, steps=1, usage=turn.usage)
        kept = await self._working_state()
        self.session.messages[:] = [
            {"role": "user", "content": [{"type": "text", "text": COMPACTED + summary + kept}]}
        ]
        self.session.memory_noted.clear()  # the summary may not hold them: note them again
        self.session.save()
        return TaskResult("done", summary, steps=1, usage=turn.usage)

    async def _working_state(self) -> str:
        """What a summary must not lose, taken from the record rather than the model's
        memory: the plan, the files changed in this session and the user's last request."""
        kept = ""
        plan = _last_plan(self.session.messages)
        if plan:
            kept += _PLAN + "\n".join(plan)
        if self.checkpoints is not None:
            changed = await self.checkpoints.changes_in_session(self.session.id)
            if changed:
                kept += _CHANGED + "\n".join(f"- {line}" for line in changed)
        if self.session.last_request:
            kept += _LAST_REQUEST + self.session.last_request
        return kept

    async def _ask(self) -> Turn:
        """The model's next turn, the conversation first brought within its context budget."""
        system, schemas = self.system, self.schemas
        settings = self.tools.settings
        # A front end resolves the window by model (wiring.prepare_task); 200k for a bare loop.
        limit = int((settings.context_window or 200_000) * settings.context_budget)
        budget, messages = self.session.budget, self.session.messages
        chars = prompt_chars(system, schemas, messages)
        chars -= self._fit(chars, limit)
        try:
            turn = await self.model.respond(system, messages, schemas, self.progress.text)
        except PromptTooLong as error:
            # The estimate fell short of the API's count (or the window is smaller than the
            # settings say): learn the real size, cut a fifth at least, and ask once more.
            budget.observe(error.tokens or 2 * budget.estimate(chars), chars)
            removed = self._fit(chars, min(limit, int(budget.estimate(chars) * 0.8)))
            if not removed:
                raise
            chars -= removed
            turn = await self.model.respond(system, messages, schemas, self.progress.text)
        budget.observe(turn.usage.prompt, chars)
        return turn

    def _fit(self, chars: int, limit: int) -> int:
        removed = self.session.budget.fit(self.session.messages, chars, limit)
        if removed:
            log.info("elided %d characters of old tool results (context budget)", removed)
        return removed

    def _interrupted(self, note: str) -> None:
        """Close the task in the conversation so the next one starts clean and knows why;
        text the user added that never reached the model goes with it."""
        self.session.close_open_tool_calls()
        self.session.add_user([{"type": "text", "text": f"({note})"}, *self._steering()])

    def _steering(self) -> list[Block]:
        """The text the user added since the last step, as blocks for the next request."""
        texts = [redact(text, self.tools.secrets) for text in self.session.steering]
        self.session.steering.clear()
        for text in texts:
            self.progress.steered(text)
        return [{"type": "text", "text": _STEERED.format(text=text)} for text in texts]

    def _memory_note(self, call: Block) -> str:
        """The note of subfolders' memory for a call that read or edited a file, or ""."""
        arguments = call.get("input")
        if self.memory is None or call["name"] not in _MEMORY_TOOLS:
            return ""
        if not isinstance(arguments, dict) or not isinstance(arguments.get("path"), str):
            return ""
        try:
            path = resolve(self.tools.workspace.root, arguments["path"])
        except PathError:
            return ""
        return self.memory.subfolder_note(path, self.session.memory_noted)

    async def _call(self, call: Block, cut_off: bool, step: int) -> Block:
        tool = self.offered.get(call["name"])
        summary = tool.summary(call.get("input")) if tool else ""
        self.progress.step(call["name"], summary)
        label = f"{call['name']}: {summary}"

        async def before_change(touches: list[str] | None) -> None:
            await self._checkpoint("step", step, label, touches)

        self.tools.before_change = before_change
        if cut_off:
            text, is_error = _CUT_OFF_TOOL, True
        else:
            text, is_error = await run_tool(self.tools, call["name"], call.get("input"))
            note = "" if is_error else self._memory_note(call)
            text = f"{text}\n\n{note}" if note else text
        detail = _for_the_user(text.splitlines()[0] if text else "")
        self.progress.step_done(call["name"], summary, not is_error, detail, text)
        return _tool_result(call["id"], text, is_error)
