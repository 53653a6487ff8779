"""`session/load`'s replay, in-process: the user's own words, never agentls's notes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentls.acp.replay import replay
from agentls.acp.updates import Updates
from agentls.agent.conversation import Conversation
from agentls.interfaces import Turn
from agentls.models.anthropic import anthropic_blocks, with_cache_breakpoints
from doubles import ScriptedModel, make_agent, say
from fake_api import validate_request


class Sink:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def _never(*arguments: object, **asked: object) -> Turn:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


async def _cancelled_then_steered(root: Path) -> Conversation:
    """A task cancelled before the model answered, then one the user added words to."""
    session = Conversation()
    agent, _ = make_agent(root, ScriptedModel(), session)
    agent.model.respond = _never  # type: ignore[method-assign]
    job = asyncio.ensure_future(agent.run("delete every test file"))
    await asyncio.sleep(0.05)
    job.cancel()
    assert (await job).status == "cancelled"
    session.steering.append("and the docs too")
    agent, _ = make_agent(root, ScriptedModel(say("ok"), say("done")), session)
    await agent.run("add a docstring")
    return session


async def test_a_replay_leaves_out_agentls_notes(tmp_path: Path) -> None:
    session = await _cancelled_then_steered(tmp_path)
    sink = Sink()
    updates = Updates(sink, "s1")
    replay(session.messages, updates)
    await updates.flush()
    said = [
        (u.session_update, u.content.text)
        for u in sink.updates
        if u.session_update in ("user_message_chunk", "agent_message_chunk")
    ]
    assert said == [
        ("user_message_chunk", "delete every test file"),
        ("user_message_chunk", "add a docstring"),
        ("agent_message_chunk", "ok"),
        ("user_message_chunk", "and the docs too"),
        ("agent_message_chunk", "done"),
    ]


async def test_notes_reach_the_model_as_text_without_their_mark(tmp_path: Path) -> None:
    session = await _cancelled_then_steered(tmp_path)
    texts = [b["text"] for m in session.messages for b in m["content"] if b["type"] == "text"]
    assert "(The user cancelled this task; do not go on with it unless asked.)" in texts
    _, sent = with_cache_breakpoints("system", anthropic_blocks(session.messages))
    body = {"model": "m", "max_tokens": 10, "messages": sent}
    assert validate_request(body) is None
    # The conversation itself keeps the marks, for the next replay.
    assert validate_request({**body, "messages": session.messages}) is not None
