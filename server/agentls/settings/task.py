"""The settings of the parts above the tools' context (the loop, the tools, background tasks),
written here since that context carries the settings object: what bounds a task, and the
background queue. Their meaning stays their parts' (`agent/`, `tools/`, `background/`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..config.settings import Part, Setting, boolean, int_in, whole


@dataclass(frozen=True)
class SubagentLimits:
    """What bounds the subagents a task starts (the `agent` tool)."""

    max_depth: int = 1
    """How deep subagents nest: 1, the task's own may start none; 0, no `agent` tool."""
    max_parallel: int = 4
    """The `agent` calls of one turn that run at once; the others wait their turn."""
    max_steps: int = 25
    max_tokens: int = 200_000
    """Per subagent, prompt and output tokens as the outcome line counts them."""


_SUBAGENT_FIELDS = {
    "maxDepth": ("max_depth", 0, 5),
    "maxParallel": ("max_parallel", 1, 20),
    "maxSteps": ("max_steps", 1, 1000),
    "maxTokens": ("max_tokens", 1000, 100_000_000),
}


def _subagents(value: Any) -> SubagentLimits:
    if not isinstance(value, Mapping) or set(value) - set(_SUBAGENT_FIELDS):
        raise ValueError(f"expected an object with {', '.join(_SUBAGENT_FIELDS)}")
    limits: dict[str, int] = {}
    for key, number in value.items():
        name, low, high = _SUBAGENT_FIELDS[key]
        try:
            limits[name] = int_in(low, high)(number)
        except ValueError as error:
            raise ValueError(f"{key}: {error}") from None
    return SubagentLimits(**limits)


def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.1 <= value <= 0.95:
        raise ValueError("expected a share of the context window from 0.1 to 0.95")
    return float(value)


def _command(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value.strip() if value else None
    raise ValueError("expected a command line, or null")


LOOP_ROWS = (
    whole(
        "maxSteps",
        "max_steps",
        1,
        1000,
        50,
        "Model turns per task; reaching it ends the task with `step_limit`.",
    ),
    whole(
        "outputLimit",
        "output_limit",
        1000,
        1_000_000,
        30000,
        "Characters of a tool result the model sees; longer output is cut in the middle.",
    ),
    Setting(
        key="contextBudget",
        field="context_budget",
        check=_share,
        schema={"type": "number", "minimum": 0.1, "maximum": 0.95},
        default=0.7,
        description=(
            "Share of the context window the prompt may fill before the oldest tool results are "
            "replaced by a one-line note."
        ),
    ),
    boolean(
        "planTool",
        "plan_tool",
        True,
        "Offer the model the `todo_write` tool, so it shows its plan for a task as a checklist "
        "(`agent/plan`); turn it off for a model that does not need one.",
    ),
    Setting(
        key="subagents",
        field="subagents",
        check=_subagents,
        schema={
            "type": "object",
            "properties": {
                "maxDepth": {"type": "integer", "minimum": 0, "maximum": 5},
                "maxParallel": {"type": "integer", "minimum": 1, "maximum": 20},
                "maxSteps": {"type": "integer", "minimum": 1, "maximum": 1000},
                "maxTokens": {"type": "integer", "minimum": 1000, "maximum": 100000000},
            },
            "additionalProperties": False,
        },
        default={"maxDepth": 1, "maxParallel": 4, "maxSteps": 25, "maxTokens": 200000},
        description=(
            "Bounds of the subagents the model starts with its `agent` tool: `maxDepth` how deep "
            "they nest (1: the task's own start none; 0: no `agent` tool), `maxParallel` how many "
            "of one turn run at once, `maxSteps` and `maxTokens` per subagent (its steps and "
            "tokens also count against the task's `maxSteps`)."
        ),
    ),
)


@dataclass(frozen=True, kw_only=True)
class LoopSettings(Part):
    """What bounds a task: its turns, what the model sees of a result, its context, its plan,
    its subagents."""

    ROWS: ClassVar[tuple[Setting, ...]] = LOOP_ROWS

    max_steps: int = 50
    output_limit: int = 30000
    context_budget: float = 0.7
    plan_tool: bool = True
    subagents: SubagentLimits = field(default_factory=SubagentLimits)


BACKGROUND_ROWS = (
    Setting(
        key="background.setup",
        formerly="backgroundSetup",
        field="background_setup",
        check=_command,
        schema={"type": ["string", "null"]},
        default=None,
        description=(
            "A command run in a background task's fresh worktree before the agent starts, e.g. "
            "`npm ci` or `uv sync`; always in the sandbox (not at all without one), like the "
            "agent's commands there. `null` (default): none."
        ),
    ),
    whole(
        "background.maxRunning",
        "background_max_running",
        1,
        32,
        3,
        "Background tasks that run at once on this machine; the others wait in the queue.",
        formerly="backgroundMaxRunning",
    ),
    whole(
        "background.keepDays",
        "background_keep_days",
        1,
        365,
        7,
        "Days a finished background task (its worktree and branch) is kept unless reviewed "
        "or discarded sooner; older ones are removed.",
        formerly="backgroundKeepDays",
    ),
)


@dataclass(frozen=True, kw_only=True)
class BackgroundSettings(Part):
    """Background tasks: the command that prepares a task's tree, the queue, how long a
    finished task is kept."""

    ROWS: ClassVar[tuple[Setting, ...]] = BACKGROUND_ROWS

    background_setup: str | None = None
    background_max_running: int = 3
    background_keep_days: int = 7
