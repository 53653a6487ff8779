"""What bounds each agent of a task, and what it spent: a subagent's steps and tokens count
against its own limits and against those of every agent above it, so the task's `maxSteps`
holds for the whole tree, however many subagents it starts."""

from __future__ import annotations

from dataclasses import dataclass, field

from .task_result import SubagentFigures


@dataclass(kw_only=True)
class Budget:
    max_steps: int
    max_tokens: int | None = None
    """Prompt and output tokens, as the outcome line counts them; None: no bound."""
    parent: Budget | None = None
    steps_setting: str = "the maxSteps setting"
    tokens_setting: str = ""
    """The settings that set the limits, for the message that says one was reached."""
    steps: int = 0
    tokens: int = 0
    children: list[SubagentFigures] = field(default_factory=list)
    """The subagents this agent started, each with its own figures, as they ended."""

    def reset(self) -> None:
        """A new task of the same agent: nothing spent yet."""
        self.steps = self.tokens = 0
        self.children.clear()

    def spend(self, steps: int = 0, tokens: int = 0) -> None:
        node: Budget | None = self
        while node is not None:
            node.steps += steps
            node.tokens += tokens
            node = node.parent

    def exceeded(self) -> Budget | None:
        """The nearest budget, this one or one above it, that is spent; None: go on."""
        node: Budget | None = self
        while node is not None:
            if node.steps >= node.max_steps or node.tokens_out():
                return node
            node = node.parent
        return None

    def tokens_out(self) -> bool:
        return self.max_tokens is not None and self.tokens >= self.max_tokens

    def child(self, max_steps: int, max_tokens: int) -> Budget:
        return Budget(
            max_steps=max_steps,
            max_tokens=max_tokens,
            parent=self,
            steps_setting="subagents.maxSteps",
            tokens_setting="subagents.maxTokens",
        )

    def reached(self, own: bool) -> str:
        """Why the loop stopped at this spent budget: its own limit (`own`), or that of an
        agent above it (its task's)."""
        if self.tokens_out():
            reached = f"{self.max_tokens:,} tokens ({self.tokens_setting})"
        else:
            reached = f"{self.max_steps} steps ({self.steps_setting})"
        if own:
            return f"Stopped after {reached}."
        return f"Stopped: the task reached its limit of {reached}, its subagents' steps counted."


@dataclass(frozen=True)
class LoopLimits:
    """What bounds a task: its steps, and the share of the model's window it may fill."""

    max_steps: int = 50
    context_window: int = 200_000
    context_budget: float = 0.8

    @property
    def prompt_limit(self) -> int:
        return int(self.context_window * self.context_budget)
