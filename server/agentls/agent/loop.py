"""The agent loop: ask the model, run the tools it asks for, feed the results back.

It depends only on the interfaces in `interfaces.py` and the tool table; the doors wire them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ..images import Image, user_blocks
from ..interfaces import (
    Block,
    CheckpointKind,
    Checkpoints,
    CommandCancelled,
    Memory,
    Model,
    ModelError,
    Progress,
    PromptTooLong,
    Turn,
    Usage,
)
from ..redaction import redact
from ..tools import ToolContext, offered, run_tool
from ..tools.base import CALL_ID, BeforeChange
from ..tools.image_results import collecting, with_images
from .budget import Budget
from .calls import in_model_order
from .compaction import compact
from .context import prompt_chars
from .conversation import Conversation, note, text_of, tool_result
from .prompt import system_prompt
from .server_tools import report_server_tools
from .task_result import CANCELLED_BY_USER, Status, TaskResult

log = logging.getLogger(__name__)

_CUT_OFF = "Your reply was cut off at the output token limit. Continue where you stopped."
_CUT_OFF_TOOL = (
    "Not run: your reply hit the output token limit, so this call may be incomplete. "
    "Send it again, in smaller pieces if it is long."
)
_STEERED = "(The user adds, while you work on this task:)\n{text}"


@dataclass(frozen=True)
class LoopLimits:
    """What bounds a task: its steps, and the share of the model's window it may fill."""

    max_steps: int = 50
    context_window: int = 200_000
    context_budget: float = 0.8

    @property
    def prompt_limit(self) -> int:
        return int(self.context_window * self.context_budget)


def _limit_reached(spent: Budget, own: bool) -> str:
    """Why the loop stopped: its own limit, or that of an agent above it (its task's)."""
    if spent.tokens_out():
        reached = f"{spent.max_tokens:,} tokens ({spent.tokens_setting})"
    else:
        reached = f"{spent.max_steps} steps ({spent.steps_setting})"
    if own:
        return f"Stopped after {reached}."
    return f"Stopped: the task reached its limit of {reached}, its subagents' steps counted."


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
        self.budget = budget or Budget(limits.max_steps)
        self.record = record
        self.on_end = on_end
        """Awaited when the task ends (its language servers stopped); a subagent has none."""
        self._recording: asyncio.Future[None] | None = None
        self._attached: dict[str, list[Block]] = {}
        """Images a call's tool attached (image_results), by call id, until its result."""

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
            return TaskResult("failed", blocked)
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
        await self.checkpoints.record(self.conversation.mark(kind, step, label, touches))

    async def _run(self, task: str, images: list[Image]) -> TaskResult:
        usage = Usage()
        last = Usage()
        steps = 0
        conversation = self.conversation

        budget = self.budget
        budget.reset()

        def result(status: Status, summary: str, hint: str = "") -> TaskResult:
            edits = self.tools.edits
            applied, rejected, partly = edits.applied, edits.rejected, edits.partly
            total = Usage()  # what the task cost: its subagents' share included
            for spent in (usage, *(child.usage for child in budget.children)):
                total.add(spent)
            done = TaskResult(status, summary, steps, applied, rejected, total, hint, partly)
            done.subagents = list(budget.children)
            done.last_turn = last
            return done

        start = conversation.checkpoint()
        # The task may carry the editor's selection, which may hold a secret (a .env line).
        vision = self.tools.settings.vision is not False
        conversation.add_user(
            [
                *user_blocks(images, vision),
                {"type": "text", "text": redact(task, self.tools.secrets)},
            ]
        )
        try:
            while (spent := budget.exceeded()) is None:
                steps += 1
                budget.spend(steps=1)
                turn = await self._ask()
                usage.add(turn.usage)
                last = turn.usage
                budget.spend(tokens=turn.usage.prompt + turn.usage.output)
                # The API refuses an empty assistant turn in the history of a later request.
                content = turn.content or [{"type": "text", "text": "(empty reply)"}]
                conversation.messages.append({"role": "assistant", "content": content})
                conversation.save()
                report_server_tools(turn.content, self.progress)
                calls = [b for b in turn.content if b.get("type") == "tool_use"]
                if turn.stop_reason == "refusal":
                    # A refused turn left in the history makes the next ones refused too.
                    conversation.rewind(start)
                    conversation.steering.clear()
                    declined = result("failed", "The model declined this task (refusal).")
                    declined.refused = True
                    return declined
                if not calls:
                    if turn.stop_reason == "pause_turn":  # a long server-side search: go on
                        continue
                    if turn.stop_reason == "max_tokens":
                        conversation.add_user([note(_CUT_OFF)])
                        continue
                    if conversation.steering:  # added as the model finished: not done yet
                        conversation.add_user(self._steering())
                        continue
                    if (more := await self.tools.hooks.stopping()) is not None:
                        conversation.add_user([note(more)])
                        continue
                    return result("done", text_of(turn.content))
                cut_off = turn.stop_reason == "max_tokens"
                conversation.add_user([])
                run = functools.partial(self._call, cut_off=cut_off, step=steps)
                ordered = in_model_order(calls, offered(self.tools), self.progress, run)
                async with contextlib.aclosing(ordered) as results:
                    async for block in results:
                        attached = self._attached.pop(block["tool_use_id"], [])
                        conversation.messages[-1]["content"].append(with_images(block, attached))
                        conversation.save()
                conversation.add_user(self._steering())
            status: Status = "token_limit" if spent.tokens_out() else "step_limit"
            return result(status, _limit_reached(spent, own=spent is budget))
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

    async def _ask(self) -> Turn:
        """The model's next turn, the conversation first brought within its context budget."""
        # The same for the task but when an approved plan ends the plan mode (the cache).
        system, schemas = self.system, [t.schema() for t in offered(self.tools).values()]
        limit = self.limits.prompt_limit
        budget, messages = self.conversation.budget, self.conversation.messages
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
        removed = self.conversation.budget.fit(self.conversation.messages, chars, limit)
        if removed:
            log.info("elided %d characters of old tool results (context budget)", removed)
        return removed

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

    async def _call(self, call: Block, summary: str, cut_off: bool, step: int) -> tuple[str, bool]:
        label = f"{call['name']}: {summary}"

        async def before_change(touches: list[str] | None) -> None:
            if self.record is not None:  # a subagent's change is recorded as its parent's step
                await self.record(touches)
            await self._checkpoint("step", step, label, touches)

        CALL_ID.set(call["id"])  # each call runs in its own context: this one's alone

        arguments = call.get("input")
        if cut_off:
            return _CUT_OFF_TOOL, True
        try:
            with collecting() as attached:
                text, is_error = await run_tool(self.tools, call["name"], arguments, before_change)
            if attached and not is_error:
                self._attached[call["id"]] = attached
        except CommandCancelled as cancel:  # what the command printed is the model's too
            answered = tool_result(call["id"], redact(cancel.output, self.tools.secrets), True)
            self.conversation.messages[-1]["content"].append(answered)
            raise
        noted, memory = self.conversation.memory_noted, self.memory
        note = "" if is_error or not memory else memory.note(call["name"], arguments, noted)
        return (f"{text}\n\n{note}" if note else text), is_error
