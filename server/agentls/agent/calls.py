"""The order a turn's tool calls run in: consecutive read-only calls at once, consecutive
`agent` calls at once, every other call alone, in its place; results, and the progress the
user sees, always in the model's order.

A call that may change anything (an edit, a command, the plan) waits for the read-only calls
before it, and the calls after it wait for it, so every call sees the workspace as the calls
before it left it, exactly as if all ran one by one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence

from ..interfaces import Block, CommandCancelled, Progress
from ..redaction import redact
from ..tools import Tool, ToolContext, run_tool, told
from ..tools.base import CALL_ID, BeforeChange
from ..tools.image_results import collecting
from .conversation import Conversation, tool_result

CUT_OFF_CALL = (
    "Not run: your reply hit the output token limit, so this call may be incomplete. "
    "Send it again, in smaller pieces if it is long."
)
"""The result of each call of a turn cut off at the output token limit: none of them runs."""

Run = Callable[[Block, str], Awaitable[tuple[str, bool]]]
"""Runs one call (given its summary): the result's text and whether it is an error."""


def summary(call: Block, tools: Mapping[str, Tool]) -> str:
    tool = tools.get(call["name"])
    return tool.summary(call.get("input")) if tool else ""


def batches(calls: Sequence[Block], tools: Mapping[str, Tool]) -> list[list[Block]]:
    """The calls cut into runs that may overlap: each read-only run whole, each run of
    `agent` calls whole (their subagents work at once, as the model asked), the rest one
    each. The two kinds never mix: a subagent may edit what a read would see."""

    def together(call: Block) -> str | None:
        tool = tools.get(call["name"])
        if tool is None:
            return None
        return "agent" if tool.delegates else "read" if tool.read_only else None

    cut: list[list[Block]] = []
    for call in calls:
        kind = together(call)
        if kind is not None and cut and together(cut[-1][-1]) == kind:
            cut[-1].append(call)
        else:
            cut.append([call])
    return cut


async def in_model_order(
    calls: Sequence[Block], tools: Mapping[str, Tool], progress: Progress, run: Run
) -> AsyncGenerator[Block, None]:
    """Each call's tool_result, in the model's order. A call's progress starts when it is the
    first one not yet answered, so a sink that shows one step at a time shows them in order.
    Close it with `contextlib.aclosing`: calls still running are then cancelled."""
    for batch in batches(calls, tools):
        summaries = [summary(call, tools) for call in batch]
        running = [asyncio.ensure_future(run(c, s)) for c, s in zip(batch, summaries, strict=True)]
        try:
            for call, shown, task in zip(batch, summaries, running, strict=True):
                progress.step(call["name"], shown)
                text, is_error = await task
                ok, detail = told(tools.get(call["name"]), call.get("input"), text, is_error)
                progress.step_done(call["name"], shown, ok, detail, text)
                yield tool_result(call["id"], text, is_error)
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)


async def run_call(
    tools: ToolContext,
    call: Block,
    before_change: BeforeChange,
    conversation: Conversation,
    attached: dict[str, list[Block]],
) -> tuple[str, bool]:
    """Run one call: its result's text and whether it is an error. The images its tool
    attached (image_results) are kept in `attached` under the call's id, until its result;
    a cancelled command's output is answered in the conversation before the cancel goes on
    (what the command printed is the model's too)."""
    CALL_ID.set(call["id"])  # each call runs in its own context: this one's alone
    try:
        with collecting() as images:
            text, is_error = await run_tool(tools, call["name"], call.get("input"), before_change)
        if images and not is_error:
            attached[call["id"]] = images
    except CommandCancelled as cancel:
        answered = tool_result(call["id"], redact(cancel.output, tools.secrets), True)
        conversation.messages[-1]["content"].append(answered)
        raise
    return text, is_error
