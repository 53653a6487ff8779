"""Subagents: what the `agent` tool adds to the first request, and two Explore subagents of
one turn beside the slower one alone, against a model that takes a fixed time to answer."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api import FakeAnthropic, Turn, first_prompt_tokens, reply, text, tool_use
from .editor import BenchEditor, server_command
from .runs import SETTINGS, agentls_task
from .trajectory import ONE_WORD_TASK, greeting_turns

WITHOUT = {**SETTINGS, "subagents": {"maxDepth": 0}}
"""The documented way to take the `agent` tool away."""

TASK = "Look into the two modules."


async def first_prompt_without_subagents(
    fake: FakeAnthropic, env: dict[str, str], root: Path
) -> int:
    """The one-word task's first request in a server with no `agent` tool."""
    editor = BenchEditor(WITHOUT)
    await editor.start(server_command("agentls"), env, root)
    try:
        await agentls_task(editor, fake, ONE_WORD_TASK, greeting_turns())
        offered = {tool["name"] for tool in fake.requests[0].body.get("tools", [])}
        if "agent" in offered:
            raise RuntimeError("subagents.maxDepth 0 still offers the agent tool")
        return first_prompt_tokens(fake.requests)
    finally:
        await editor.close()


@dataclass(frozen=True)
class Explorer:
    """An Explore subagent that reads `reads` files, one model turn each, then answers."""

    mark: str
    """Its prompt's first words: how the fake knows whose request it answers."""
    reads: list[str]


class Routed:
    """Answers each request as its conversation's script says, every subagent turn after a
    fixed delay: with several conversations at once, the order of requests is not known."""

    def __init__(self, explorers: list[Explorer], delay: float) -> None:
        self.explorers, self.delay = explorers, delay

    def __call__(self, body: dict[str, Any]) -> Turn:
        messages = body["messages"]
        first = json.dumps(messages[0]["content"])
        turn = len(messages) // 2  # user, then assistant and tool results for each turn
        explorer = next((e for e in self.explorers if e.mark in first), None)
        if explorer is None:  # the task's own conversation
            if turn == 0:
                calls = [
                    tool_use(
                        "agent",
                        {"description": e.mark, "prompt": e.mark, "subagent_type": "Explore"},
                    )
                    for e in self.explorers
                ]
                return reply(*calls)
            return reply(text("Both looked at."))
        if turn < len(explorer.reads):
            return reply(tool_use("read_file", {"path": explorer.reads[turn]}), delay=self.delay)
        return reply(text(f"{explorer.mark}: read {turn} files."), delay=self.delay)


@dataclass(frozen=True)
class ParallelExplorers:
    delay: float
    """Each subagent turn's wait in the fake model."""
    slower_turns: int
    together_seconds: float
    slower_alone_seconds: float


async def _explore(
    editor: BenchEditor, fake: FakeAnthropic, explorers: list[Explorer], delay: float
) -> float:
    """The task's first request to its last (the one with the subagents' answers), as the
    fake saw them: the subagents' whole time, without the server's start-up."""
    route = Routed(explorers, delay)
    turns = 2 + sum(len(e.reads) + 1 for e in explorers)
    fake.reset()
    fake.script(*(route for _ in range(turns)))
    result = await editor.run_task(TASK)
    await editor.new_session()
    if len(result["usage"]["subagents"]) != len(explorers):
        raise RuntimeError(f"not every subagent ran: {result!r}")
    return fake.requests[-1].received - fake.requests[0].received


async def parallel_explorers(
    editor: BenchEditor, fake: FakeAnthropic, paths: list[str], delay: float, rounds: int
) -> ParallelExplorers:
    """Two Explore subagents of one turn (reading 2 files and 1), then the slower alone, in
    turns; on `editor`, whose server's SDK is warm."""
    slower = Explorer("Explore slower", paths[:2])
    faster = Explorer("Explore faster", paths[2:3])
    together, alone = [], []
    for _ in range(rounds):
        together.append(await _explore(editor, fake, [slower, faster], delay))
        alone.append(await _explore(editor, fake, [slower], delay))
    return ParallelExplorers(
        delay, len(slower.reads) + 1, statistics.median(together), statistics.median(alone)
    )
