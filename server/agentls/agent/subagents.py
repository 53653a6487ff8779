"""Subagents: the `agent` tool's side in the loop. A subagent is a new conversation run by the
same loop (`Agent`), with its own system prompt, tools and budget, and the same guards as
its task: the same workspace (edits reviewed, told as they landed), shell and approver,
permission rules and mode (plan mode's subagents get read-only tools), hooks, and its changes
recorded as its parent's step so undoing the task undoes them."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..extensions.agent_definitions import BUILT_IN, Definition
from ..interfaces import Hooks, Model, ModelError, SubagentProgress, SubagentShown
from ..models.costs import describe, price_of
from ..settings.task import SubagentLimits
from ..tools import Tool, ToolContext, offered
from ..tools.agent_tool import NAME, agent_tool
from ..tools.base import CALL_ID, BeforeChange, LoadedSkills
from .conversation import Conversation, text_of
from .loop import Agent
from .task_result import SubagentFigures, TaskResult

Models = Callable[[str], tuple[Model, str]]
"""A definition's `model` (a model id or a profile name) as a model and its id; raises
ModelError."""

_NEVER = frozenset({NAME, "exit_plan_mode"})
"""Never a subagent's: its own subagents come with `subagents` below, and only the task
may end the plan mode."""

_ENVIRONMENT = "You work in the project at {root}; every path is relative to that root."


def _task_only(hooks: Hooks) -> Hooks:
    return hooks.parent if isinstance(hooks, SubagentHooks) else hooks


@dataclass
class SubagentHooks:
    """The task's hooks as a subagent meets them: SubagentStart instead of the prompt's
    events, SubagentStop instead of Stop, the tool events unchanged."""

    parent: Hooks
    agent_id: str
    agent_type: str
    stop_active: bool = False

    async def submitted(self, task: str, first: bool) -> tuple[str, str | None]:
        added = await self.parent.subagent_started(self.agent_id, self.agent_type)
        return (f"{task}\n\n<hook-context>\n{added}\n</hook-context>" if added else task), None

    async def stopping(self) -> str | None:
        more = await self.parent.subagent_stopping(self.agent_id, self.agent_type, self.stop_active)
        self.stop_active = more is not None
        return more

    async def compacting(self) -> None:
        await self.parent.compacting()

    async def before_tool(self, tool: str, arguments: Any) -> tuple[str | None, str | None]:
        return await self.parent.before_tool(tool, arguments)

    async def after_tool(self, tool: str, arguments: Any, result: str, is_error: bool) -> str:
        return await self.parent.after_tool(tool, arguments, result, is_error)

    async def subagent_started(self, agent_id: str, agent_type: str) -> str:
        return await self.parent.subagent_started(agent_id, agent_type)

    async def subagent_stopping(self, agent_id: str, agent_type: str, active: bool) -> str | None:
        return await self.parent.subagent_stopping(agent_id, agent_type, active)


def _fits(definition: Definition, name: str, tool: Tool) -> bool:
    if name in _NEVER or not definition.allows(name):
        return False
    return not definition.read_only or (tool.read_only and name != "todo_write")


@dataclass(kw_only=True)
class Subagents:
    """Runs the subagents of one agent (`ToolContext.subagents`): the task's, or a
    subagent's own when `subagents.maxDepth` lets it start some."""

    parent: Agent
    definitions: Callable[[], Mapping[str, Definition]]
    """The types offered, read once the task's project approvals are through."""
    models: Models | None = None
    depth: int = 0
    """Of the agent that starts them: 0 for the task."""
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    """Shared by every agent of the task: a subagent's id is unique in it."""
    _types: Mapping[str, Definition] | None = None
    _tool: Tool | None = None
    _slots: asyncio.Semaphore | None = None

    @property
    def limits(self) -> SubagentLimits:
        return self.parent.tools.settings.subagents

    def types(self) -> Mapping[str, Definition]:
        if self._types is None:
            self._types = dict(self.definitions())
        return self._types

    def tool(self) -> Tool:
        # Built once: its description starts the cached prefix with the other schemas.
        if self._tool is None:
            self._tool = agent_tool([(d.name, d.description) for d in self.types().values()])
        return self._tool

    async def run(
        self, description: str, prompt: str, subagent_type: str, before_change: BeforeChange
    ) -> tuple[str, bool]:
        definition = self.types().get(subagent_type)
        if definition is None:
            return (
                f"No subagent type {subagent_type!r}; the types are {', '.join(self.types())}.",
                True,
            )
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.max_parallel)
        async with self._slots:
            return await self._run(definition, description, prompt, before_change)

    async def _run(
        self, definition: Definition, description: str, prompt: str, before_change: BeforeChange
    ) -> tuple[str, bool]:
        parent = self.parent
        model, model_name = parent.model, getattr(parent.model, "name", "")
        if definition.model and self.models is not None:
            try:
                model, model_name = self.models(definition.model)
            except ModelError as error:
                return f"The {definition.name} subagent's model cannot be used: {error}", True
        shown = SubagentShown(
            f"agent-{next(self.ids)}", definition.name, description, CALL_ID.get(), self.depth + 1
        )
        sink = parent.progress.subagent(shown)
        agent = self._agent(definition, shown, sink, model, before_change)
        result: TaskResult | None = None
        try:
            result = await agent.run(prompt)
        finally:
            ended = result or TaskResult(status="cancelled", summary="")
            figures = SubagentFigures(
                id=shown.id,
                type=definition.name,
                description=description,
                status=ended.status,
                steps=ended.steps,
                usage=ended.usage,
                model=model_name,
            )
            parent.budget.children.append(figures)
            line = self._figures(figures)
            sink.finished(ended.status == "done", line)
        if ended.status == "cancelled":
            raise asyncio.CancelledError
        return _answer(ended, agent.conversation, line)

    def _agent(
        self,
        definition: Definition,
        shown: SubagentShown,
        sink: SubagentProgress,
        model: Model,
        before_change: BeforeChange,
    ) -> Agent:
        parent, limits = self.parent, self.limits
        context = self._context(definition, shown, sink)
        steps = min(limits.max_steps, definition.max_turns or limits.max_steps)
        budget = parent.budget.child(steps, limits.max_tokens)
        root = context.workspace.root
        memory = parent.memory.prompt() if parent.memory else ""
        system = "\n\n".join(
            part for part in (definition.prompt, _ENVIRONMENT.format(root=root), memory) if part
        )
        agent = Agent(
            model,
            context,
            sink,
            Conversation(),
            replace(parent.limits, max_steps=steps),
            parent.memory,
            system=system,
            budget=budget,
            record=before_change,
        )
        if self.depth + 1 < limits.max_depth:
            context.subagents = Subagents(
                parent=agent,
                definitions=self.types,
                models=self.models,
                depth=self.depth + 1,
                ids=self.ids,
            )
        return agent

    def _context(
        self, definition: Definition, shown: SubagentShown, sink: SubagentProgress
    ) -> ToolContext:
        """The parent's context narrowed to the definition's tools (as offered now: the plan
        mode's read-only ones in the plan mode), the same workspace, shell, approver, rules,
        mode and edit tally; its own progress, the hooks as a subagent meets them, and its own
        loaded skills (its conversation has seen none of the task's)."""
        context = self.parent.tools
        tools = {n: t for n, t in offered(context).items() if _fits(definition, n, t)}
        findable = {n: t for n, t in context.findable_tools.items() if _fits(definition, n, t)}
        hooks = SubagentHooks(_task_only(context.hooks), shown.id, shown.type)
        return replace(
            context,
            progress=sink,
            table=tools,
            added_tools={},
            findable_tools=findable,
            found=set(),
            hooks=hooks,
            subagents=None,
            skills=LoadedSkills(),
        )

    def _figures(self, figures: SubagentFigures) -> str:
        price = price_of(figures.model, self.parent.tools.settings.prices)
        status = figures.status.replace("_", " ")
        steps = f"{figures.steps} step" + ("" if figures.steps == 1 else "s")
        return f"{figures.type} {figures.id}: {status} · {steps} · {describe(figures.usage, price)}"


def _answer(result: TaskResult, conversation: Conversation, figures: str) -> tuple[str, bool]:
    """What the parent's model gets: the subagent's final text, and its figures; cut short
    by a limit, what it had said so far, saying so."""
    if result.status == "done":
        return f"{result.summary or '(no reply)'}\n\n[{figures}]", False
    if result.status == "failed":
        return f"The subagent failed: {result.summary}\n\n[{figures}]", True
    said = [text_of(m["content"]) for m in conversation.messages if m["role"] == "assistant"]
    last = next((text for text in reversed(said) if text), "(it had not replied yet)")
    note = f"(The subagent was cut short: {result.summary} Above is what it had so far.)"
    return f"{last}\n\n{note}\n\n[{figures}]", False


def delegate(
    agent: Agent,
    definitions: Callable[[], Mapping[str, Definition]] | None = None,
    models: Models | None = None,
) -> None:
    """Let `agent` (a task's) start subagents, unless `subagents.maxDepth` is 0."""
    if agent.tools.settings.subagents.max_depth > 0:
        found = definitions or (lambda: {d.name: d for d in BUILT_IN})
        agent.tools.subagents = Subagents(parent=agent, definitions=found, models=models)
