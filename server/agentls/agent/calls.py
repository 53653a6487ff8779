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

from ..interfaces import Block, Progress
from ..tools import Tool, told
from .conversation import tool_result

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
