"""The agent loop: ask the model, run the tools it asks for, feed the results back.

It depends only on the interfaces in `interfaces.py` and the tool table; the doors wire them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence

from ..images import Image, user_blocks
from ..interfaces import (
    Block,
    CheckpointKind,
    Checkpoints,
    Memory,
    Model,
    Progress,
    Turn,
    Usage,
)
from ..redaction import redact
from ..tools import ToolContext, offered
from ..tools.base import BeforeChange
from ..tools.image_results import with_images
from .budget import Budget, LoopLimits
from .calls import CUT_OFF_CALL, in_model_order, run_call
from .compaction import compact
from .conversation import Conversation, note, text_of
from .prompt import system_prompt
from .server_tools import report_server_tools
from .task_result import Answered, Declined, Ended, LimitReached, TaskResult, stopped

log = logging.getLogger(__name__)

_CUT_OFF = "Your reply was cut off at the output token limit. Continue where you stopped."
_STEERED = "(The user adds, while you work on this task:)\n{text}"


class Agent:
    def __init__(
        self,
        model: Model,
        tools: ToolContext,
        progress: Progress,
        conversation: Conversation,
        limits: LoopLimits,
        memory: Memory | None = None,
        checkpoints: Checkpoints | None = None,
        *,
        system: str | None = None,
        budget: Budget | None = None,
        record: BeforeChange | None = None,
        on_end: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """A subagent's agent has its own `system` prompt, a `budget` under its parent's,
        and records the workspace through its parent's step (`record`), so undoing the task
        undoes its changes too."""
        self.model = model
        self.tools = tools
        self.progress = progress
        self.conversation = conversation
        self.limits = limits
        self.memory = memory
        # Built once: the system prompt (and the memory in it) stays byte-stable for the task.
        self._given_system = system
        self.system = self._system()
        self.checkpoints = checkpoints
        self.budget = budget or Budget(max_steps=limits.max_steps)
        self.record = record
        self.on_end = on_end  # awaited when the task ends (its language servers stopped)
        self._recording: asyncio.Future[None] | None = None
        self._attached: dict[str, list[Block]] = {}
        """Images a call's tool attached (image_results), by call id, until its result."""
        self._usage, self._steps, self._last = Usage(), 0, Usage()
        """What the task's own turns cost, how many it took (the step being run), and what
        the last one cost: the context it filled (an ACP client's meter)."""

    def _system(self) -> str:
        """The system prompt: a subagent's own, else the task's rules, memory and skills."""
        if self._given_system:
            return self._given_system
        memory = self.memory.prompt() if self.memory else ""
        return system_prompt(self.tools.workspace.root, memory, self.tools.skill_catalog)

    async def run(
        self, task: str, request: str | None = None, images: Sequence[Image] = ()
    ) -> TaskResult:
        """Run one task to its end (a cancel ends it `cancelled`): `task` is the message to
        the model, `request` the user's words (default: the task), `images` what the user
        attached. The workspace is recorded before, after, and before each step that may
        change files, so it can be undone."""
        words = redact(request if request is not None else task, self.tools.secrets)
        task, blocked = await self.tools.hooks.submitted(task, not self.conversation.messages)
        if blocked is not None:  # a UserPromptSubmit hook's block: nothing reaches the model
            return TaskResult(status="failed", summary=blocked)
        # Again, the same unless the user just approved the project's skills (before any
        # request of the task, so the prefix stays byte-stable within it).
        self.system = self._system()
        title = self.conversation.begin_task(words)
        if self.checkpoints is not None:
            # Recorded while the model thinks; awaited before the first step that may change
            # files (a first checkpoint of a big workspace takes seconds).
            record = self.checkpoints.record(self.conversation.mark("task", None, title))
            self._recording = asyncio.ensure_future(record)
        try:
            return await self._run(task, list(images))
        finally:
            self.conversation.save()
            await self._checkpoint("end", None, title)
            if self.on_end is not None:
                await self.on_end()

    async def compact(self) -> TaskResult:
        await self.tools.hooks.compacting()
        return await compact(self.conversation, self._ask, self.checkpoints)

    async def _checkpoint(
        self, kind: CheckpointKind, step: int | None, label: str, touches: list[str] | None = None
    ) -> None:
        if self.checkpoints is None:
            return
        if self._recording is not None:
            # Shielded: a cancel while waiting must not lose the task's checkpoint.
            await asyncio.shield(self._recording)
            self._recording = None
        await self.checkpoints.record(self.conversation.mark(kind, step, label, touches))

    async def _run(self, task: str, images: list[Image]) -> TaskResult:
        """The loop: a turn after another until one of them ends the task (`Ended`)."""
        self.budget.reset()
        self._usage, self._steps, self._last = Usage(), 0, Usage()
        start = self.conversation.checkpoint()
        # The task may carry the editor's selection, which may hold a secret (a .env line).
        vision = self.tools.settings.vision is not False
        text = {"type": "text", "text": redact(task, self.tools.secrets)}
        self.conversation.add_user([*user_blocks(images, vision), text])
        try:
            while (spent := self.budget.exceeded()) is None:
                await self._turn(start)
            raise LimitReached(spent.reached(own=spent is self.budget), spent.tokens_out())
        except Ended as end:
            return self._result(end)
        except (asyncio.CancelledError, Exception) as error:
            stop, why = stopped(error)
            self._interrupted(why)  # the conversation told why, to start the next task clean
            return self._result(stop)

    async def _turn(self, start: tuple[int, int]) -> None:
        """One step: the model's turn, then the calls it asked for, their results and what
        the user added meanwhile. Raises `Ended` when the turn ends the task."""
        conversation = self.conversation
        self._steps += 1
        self.budget.spend(steps=1)
        turn = await self._ask()
        self._usage.add(turn.usage)
        self._last = turn.usage
        self.budget.spend(tokens=turn.usage.prompt + turn.usage.output)
        # The API refuses an empty assistant turn in the history of a later request.
        content = turn.content or [{"type": "text", "text": "(empty reply)"}]
        conversation.messages.append({"role": "assistant", "content": content})
        conversation.save()
        report_server_tools(turn.content, self.progress)
        if turn.stop_reason == "refusal":
            # A refused turn left in the history makes the next ones refused too.
            conversation.rewind(start)
            conversation.steering.clear()
            raise Declined()
        calls = [b for b in turn.content if b.get("type") == "tool_use"]
        if not calls:
            if more := await self._go_on(turn):
                conversation.add_user(more)
            return
        conversation.add_user([])
        run = functools.partial(self._call, cut_off=turn.stop_reason == "max_tokens")
        ordered = in_model_order(calls, offered(self.tools), self.progress, run)
        async with contextlib.aclosing(ordered) as results:
            async for block in results:
                attached = self._attached.pop(block["tool_use_id"], [])
                conversation.messages[-1]["content"].append(with_images(block, attached))
                conversation.save()
        conversation.add_user(self._steering())

    async def _go_on(self, turn: Turn) -> list[Block]:
        """A turn with no call: what makes the model go on (nothing, for a paused turn), or
        `Answered`: the task is done."""
        if turn.stop_reason == "pause_turn":  # a long server-side search: go on
            return []
        if turn.stop_reason == "max_tokens":
            return [note(_CUT_OFF)]
        if self.conversation.steering:  # added as the model finished: not done yet
            return self._steering()
        if (more := await self.tools.hooks.stopping()) is not None:
            return [note(more)]
        raise Answered(text_of(turn.content))

    def _result(self, end: Ended) -> TaskResult:
        """The task's result; what it cost includes its subagents' share."""
        total = Usage()
        for spent in (self._usage, *(child.usage for child in self.budget.children)):
            total.add(spent)
        done = end.result(self._steps, self.tools.edits, total, self.budget.children)
        done.last_turn = self._last
        return done

    async def _ask(self) -> Turn:
        """The model's next turn, the conversation first brought within its context budget."""
        # The same for the task but when an approved plan ends the plan mode (the cache).
        schemas = [t.schema() for t in offered(self.tools).values()]
        conversation = self.conversation
        return await conversation.budget.ask(
            self.model, self.system, schemas, conversation.messages, self.limits, self.progress
        )

    def _interrupted(self, why: str) -> None:
        """Close the task in the conversation so the next one starts clean and knows why;
        text the user added that never reached the model goes with it."""
        self.conversation.close_open_tool_calls()
        self.conversation.add_user([note(f"({why})"), *self._steering()])

    def _steering(self) -> list[Block]:
        """The text the user added since the last step, as blocks for the next request."""
        texts = [redact(text, self.tools.secrets) for text in self.conversation.steering]
        self.conversation.steering.clear()
        for text in texts:
            self.progress.steered(text)
        return [note(_STEERED.format(text=text), said=text) for text in texts]

    async def _call(self, call: Block, summary: str, cut_off: bool) -> tuple[str, bool]:
        label, step = f"{call['name']}: {summary}", self._steps

        async def before_change(touches: list[str] | None) -> None:
            if self.record is not None:  # a subagent's change is recorded as its parent's step
                await self.record(touches)
            await self._checkpoint("step", step, label, touches)

        if cut_off:
            return CUT_OFF_CALL, True
        ran = await run_call(self.tools, call, before_change, self.conversation, self._attached)
        text, is_error = ran
        noted, memory = self.conversation.memory_noted, self.memory
        note = "" if is_error or not memory else memory.note(call["name"], call.get("input"), noted)
        return (f"{text}\n\n{note}" if note else text), is_error
