"""Compaction: the conversation replaced by the model's summary of it, with what a summary
must not lose taken from the record rather than the model's memory (the plan, the files
changed in the session, the user's last request)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..interfaces import Checkpoints, ModelError, Turn
from .context import drop_images
from .conversation import Conversation, note, text_of
from .task_result import CANCELLED_BY_USER, TaskResult

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
_SKILLS = "\n\nSkills loaded in this session, their instructions kept whole:\n"
_SKILL_CONTENT = re.compile(r'<skill_content name="([^"]+)">.*?</skill_content>', re.DOTALL)


async def compact(
    conversation: Conversation,
    ask: Callable[[], Awaitable[Turn]],
    checkpoints: Checkpoints | None,
) -> TaskResult:
    """Replace the conversation by the model's summary of it (`ask` sends the conversation as
    it stands); on failure keep it (old results shortened to fit the context budget stay
    shortened)."""
    if not conversation.messages:
        return TaskResult(status="done", summary="Nothing to compact yet.")
    conversation.close_open_tool_calls()
    # Images first: a summary is text, and the images would cost the summary's request most.
    drop_images(conversation.messages)
    before = conversation.checkpoint()
    conversation.add_user([{"type": "text", "text": _COMPACT}])
    try:
        turn = await ask()
    except BaseException as error:
        # Left in place, the request would join the user's next task.
        conversation.rewind(before)
        if isinstance(error, asyncio.CancelledError):
            return TaskResult(status="cancelled", summary=CANCELLED_BY_USER, steps=1)
        if isinstance(error, ModelError):
            return TaskResult(status="failed", summary=str(error), steps=1, error_hint=error.hint)
        raise
    summary = text_of(turn.content)
    if not summary or turn.stop_reason in ("max_tokens", "refusal"):
        conversation.rewind(before)
        failure = "The model wrote no complete summary; nothing was compacted."
        return TaskResult(status="failed", summary=failure, steps=1, usage=turn.usage)
    kept = await _working_state(conversation, checkpoints)
    conversation.messages[:] = [{"role": "user", "content": [note(COMPACTED + summary + kept)]}]
    conversation.memory_noted.clear()  # the summary may not hold them: note them again
    conversation.save()
    return TaskResult(status="done", summary=summary, steps=1, usage=turn.usage)


async def _working_state(conversation: Conversation, checkpoints: Checkpoints | None) -> str:
    kept = ""
    skills = _loaded_skills(conversation.messages)
    if skills:
        kept += _SKILLS + "\n\n".join(skills)
    plan = _last_plan(conversation.messages)
    if plan:
        kept += _PLAN + "\n".join(plan)
    if checkpoints is not None:
        changed = await checkpoints.changes_in_session(conversation.id)
        if changed:
            kept += _CHANGED + "\n".join(f"- {line}" for line in changed)
    if conversation.last_request:
        kept += _LAST_REQUEST + conversation.last_request
    return kept


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    found: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            found += _texts(block.get("text") or block.get("content") or "")
    return found


def _loaded_skills(messages: list[dict[str, Any]]) -> list[str]:
    """Each skill's last loaded instructions (the skill tool's result, a `/name` task, a
    summary that kept them): what a summary must not lose."""
    loaded: dict[str, str] = {}
    for message in messages:
        for text in _texts(message["content"]):
            for match in _SKILL_CONTENT.finditer(text):
                loaded.pop(match[1], None)
                loaded[match[1]] = match[0]
    return list(loaded.values())


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
