"""todo_write: the model's plan for the task, shown to the user as a checklist."""

from __future__ import annotations

from typing import Any

from ..interfaces import PLAN_STATUSES, PlanItem
from ..redaction import redact
from .base import BeforeChange, Tool, ToolContext, ToolError

MAX_ITEMS = 50
ITEM_CHARS = 300
"""A plan is a few short lines in a status window; a hostile model cannot flood the editor."""


def _item(number: int, entry: Any, secrets: tuple[str, ...]) -> PlanItem:
    if not isinstance(entry, dict) or set(entry) - {"content", "status"}:
        raise ToolError(f"todos[{number}] must be an object with content and status only")
    content, status = entry.get("content"), entry.get("status")
    if not isinstance(content, str) or not content.strip():
        raise ToolError(f"todos[{number}].content must be a non-empty string")
    if status not in PLAN_STATUSES:
        raise ToolError(f"todos[{number}].status must be one of: {', '.join(PLAN_STATUSES)}")
    # One line each, as the clients show it; cut after redaction so no part of a secret stays.
    line = " ".join(redact(content, secrets).split())
    if len(line) > ITEM_CHARS:
        line = line[: ITEM_CHARS - 3] + "..."
    return PlanItem(line, status)


async def todo_write(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    todos = arguments["todos"]
    if len(todos) > MAX_ITEMS:
        raise ToolError(f"a plan has at most {MAX_ITEMS} items; merge some")
    items = [_item(number, entry, context.secrets) for number, entry in enumerate(todos)]
    if context.progress is not None:
        context.progress.plan(items)
    done = sum(item.status == "completed" for item in items)
    working = sum(item.status == "in_progress" for item in items)
    note = " Keep one item in_progress while you work on it." if working > 1 else ""
    return f"Plan shown to the user: {done} of {len(items)} completed.{note}"


def _plan_words(arguments: dict[str, Any], result: str) -> tuple[bool, str]:
    todos = arguments["todos"]
    done = sum(isinstance(t, dict) and t.get("status") == "completed" for t in todos)
    return True, f"plan: {done} of {len(todos)} done"


TODO_WRITE = Tool(
    name="todo_write",
    description=(
        "Show the user your plan for this task as a checklist, and keep it current: send "
        "the whole list each time. Use it for work of three steps or more. Mark an item "
        "in_progress before you start it and completed as soon as it is done."
    ),
    properties={
        "todos": {
            "type": "array",
            "description": "The whole plan, in order.",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "What to do, one line."},
                    "status": {"type": "string", "enum": list(PLAN_STATUSES)},
                },
                "required": ["content", "status"],
            },
        }
    },
    required=("todos",),
    handler=todo_write,
    summary_field="",
    read_only=True,
    words=_plan_words,
)
