"""exit_plan_mode: in the plan mode, the model puts its finished plan to the user; approved,
the session switches to `default` and the model carries the plan out in the same task."""

from __future__ import annotations

from typing import Any

from ..redaction import redact
from .base import BeforeChange, Tool, ToolContext, ToolError

APPROVED = (
    "The user approved the plan. The session is now in the default mode: carry the plan out "
    "(the tools that change files and run commands are offered again)."
)
DECLINED = (
    "The user did not approve the plan; stay in the plan mode. Ask what they want changed, "
    "or revise the plan and propose it again."
)


async def exit_plan_mode(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
    plan = redact(arguments["plan"].strip(), context.secrets)
    if not plan:
        raise ToolError("plan is empty; write the plan the user is to approve")
    if context.mode.current != "plan":
        return "The session is not in the plan mode; carry the plan out."
    if not await context.approver.approve_plan(plan):
        return DECLINED
    context.mode.current = "default"
    return APPROVED


EXIT_PLAN_MODE = Tool(
    name="exit_plan_mode",
    description=(
        "You are in the plan mode: only read-only tools are offered. When your plan for the "
        "task is ready, call this with the plan (markdown, concise). The user approves it or "
        "not; once approved you carry it out with all tools."
    ),
    properties={"plan": {"type": "string", "description": "The plan, in markdown."}},
    required=("plan",),
    handler=exit_plan_mode,
    summary_field="",
    read_only=True,
    gated=True,
)
