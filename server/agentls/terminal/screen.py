"""What the terminal shows of a task, on `rich`: the model's markdown as it streams, each step
and what it did, a running command's last lines with the time it has taken, a spinner while
the model thinks. Only on a terminal does anything move: piped, each thing is printed once,
as plain lines (no colour, no cursor moves), for logs and scripts.

Every text from the model or a command goes through `visible` first, so it cannot move the
cursor or hide a line, on a terminal or not."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from typing import TextIO

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.padding import Padding
from rich.spinner import Spinner
from rich.text import Text

from ..counts import counted
from ..interfaces import PlanItem, SubagentShown
from ..visible import visible
from .answers import Answers

OUTPUT_TAIL_LINES = 10
"""Lines of a command's output shown in the terminal (the model gets all of it)."""

_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def _seconds(elapsed: float) -> str:
    return f"{elapsed:.0f}s" if elapsed < 60 else f"{elapsed // 60:.0f}m {elapsed % 60:02.0f}s"


class _Tail:
    """The last lines of a running command's output, and how many came before them."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=OUTPUT_TAIL_LINES)
        self.count = 0

    def add(self, lines: str) -> None:
        for line in lines.splitlines():
            self.lines.append(visible(line, lines=False))
            self.count += 1

    def shown(self) -> Iterator[Text]:
        if self.count > len(self.lines):
            yield Text(f"    … {counted(self.count - len(self.lines), 'more line')}", "dim")
        for line in self.lines:
            yield Text(f"    {line}", "dim", no_wrap=True, overflow="ellipsis")


class _Running:
    """A running subagent as its spinner shows it: its name, what it does now, since when."""

    def __init__(self, indent: str, name: str) -> None:
        self.indent = indent
        self.name = name
        self.label = "thinking"
        self.started = time.monotonic()
        self.spinner = Spinner("dots", style="cyan")

    def doing(self, label: str) -> None:
        self.label = label
        self.started = time.monotonic()

    def shown(self) -> RenderableType:
        elapsed = _seconds(time.monotonic() - self.started)
        self.spinner.text = Text(f"{self.name} · {self.label} · {elapsed}", "dim")
        return Padding(self.spinner, (0, 0, 0, len(self.indent) + 2))


class _Waiting:
    """A spinner, what is awaited and for how long, and the running command's tail, then a
    spinner for each running subagent (they run at once, each at its own step); drawn anew at
    each refresh, so the seconds count up."""

    def __init__(
        self, label: str, tail: _Tail | None, started: float, subagents: dict[str, _Running]
    ) -> None:
        self.label = label
        self.tail = tail
        self.started = started
        self.spinner = Spinner("dots", style="cyan")
        self.subagents = subagents
        """The screen's own: a subagent that starts or ends shows at the next refresh."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        elapsed = _seconds(time.monotonic() - self.started)
        self.spinner.text = Text(f"{self.label} · {elapsed}", "dim")
        if self.tail is not None:
            yield from self.tail.shown()
        yield self.spinner
        for running in list(self.subagents.values()):
            yield running.shown()


class _Streamed:
    """The model's text so far, rendered as markdown at each refresh (not at each piece)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Markdown("".join(self.parts))


class Screen:
    """The terminal's `Progress`, and where the adapters show diffs and ask questions."""

    def __init__(self, stream: TextIO) -> None:
        self.console = Console(
            file=stream,
            no_color="NO_COLOR" in os.environ,
            highlight=False,
            markup=False,
            emoji=False,
            soft_wrap=True,  # a long line is the terminal's to wrap; piped, it stays whole
        )
        self.animated = self.console.is_terminal and not self.console.is_dumb_terminal
        self._live: Live | None = None
        self._streamed: _Streamed | None = None
        self._tail: _Tail | None = None
        self._label = ""
        """What is awaited while nothing is printed: a step's tool, or the model."""
        self._step_started = 0.0
        self.running_subagents: dict[str, _Running] = {}
        """By id, in the order they started: each has a spinner under the task's."""
        self._speaker: str | None = None
        """The subagent whose line was printed last, if nothing was printed since."""

    # Progress

    def step(self, tool: str, summary: str) -> None:
        self._settle()
        self._end_step()
        shown = f"{tool}: {visible(summary, lines=False)}" if summary else tool
        self.console.print(Text(f"\n▸ {shown}", "bold blue"))
        self._tail = _Tail()
        self._step_started = time.monotonic()
        self._label = tool
        self._wait()

    def output(self, lines: str) -> None:
        if self._tail is not None:
            self._tail.add(lines)

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        self._settle()
        self._end_step()
        mark = Text("✓", "green") if ok else Text("✗", "red")
        elapsed = time.monotonic() - self._step_started
        took = f" · {_seconds(elapsed)}" if elapsed >= 1 else ""
        shown = Text("  ").append(mark).append(f" {visible(detail, lines=False)}{took}")
        self.console.print(shown)
        if tool == "web_search":  # every page it found, the ones the answer cites numbered
            for line in output.splitlines():
                self.console.print(Text(f"    {visible(line, lines=False)}", "dim"))
        self.thinking()

    def text(self, delta: str) -> None:
        if not self.animated:
            self.console.file.write(visible(delta))
            self.console.file.flush()
            return
        if self._streamed is None:
            self._settle()
            self._streamed = _Streamed()
            self._show(self._streamed, transient=False)
        self._streamed.parts.append(visible(delta))

    def plan(self, items: list[PlanItem]) -> None:
        self._settle()
        boxes = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
        self.console.print(Text("\nPlan:", "bold"))
        for item in items:
            line = f"  {boxes[item.status]} {visible(item.content, lines=False)}"
            self.console.print(Text(line, "dim" if item.status == "completed" else ""))
        self._wait()

    def steered(self, text: str) -> None:
        self._settle()
        self.console.print(Text(f"\n+ added to the task: {visible(text, lines=False)}", "magenta"))
        self._wait()

    def notice(self, text: str) -> None:
        self._settle()
        self.console.print(Text(f"\n({visible(text, lines=False)})", "yellow"))
        self._wait()

    def subagent(self, shown: SubagentShown) -> SubagentLines:
        return SubagentLines(self, shown)

    # The rest of the terminal door

    def thinking(self) -> None:
        """The model is being asked: a spinner until its text or its next step comes."""
        self._settle()
        self._end_step()
        self._label = "thinking"
        self._step_started = time.monotonic()
        self._wait()

    def diff(self, text: str) -> None:
        self._settle()
        for line in visible(text).splitlines():
            style = "" if line.startswith(("+++", "---")) else _DIFF_STYLES.get(line[:1], "")
            self.console.print(Text(line, style))

    def say(self, text: str, style: str = "") -> None:
        """A line of the door's own (the outcome, a warning), after whatever was moving."""
        self._settle()
        self.console.print(Text(text, style))

    async def ask(self, question: str, answers: Answers) -> str:
        """Put a question and wait for its answer, the spinner stopped meanwhile."""
        self._settle()
        self.console.file.write(question)
        self.console.file.flush()
        try:
            return await answers.line()
        finally:
            self._step_started = time.monotonic()  # the time it takes, not the time asked
            self._wait()

    async def ask_text(self, question: str, answers: Answers) -> str | None:
        """`ask`, the line as typed (None when the input ended): a server's form field."""
        self._settle()
        self.console.file.write(question)
        self.console.file.flush()
        try:
            return await answers.text()
        finally:
            self._step_started = time.monotonic()
            self._wait()

    def finish(self) -> None:
        """The task ended (or was cancelled): stop moving, keep what a command printed."""
        self._settle()
        self._end_step()
        self._label = ""
        self.running_subagents.clear()

    # Moving parts

    def _wait(self) -> None:
        """A spinner for what is awaited now (with the step's tail), if anything is."""
        moving = self.moving()
        if self.animated and moving is not None and self._live is None:
            self._show(moving, transient=True)

    def moving(self) -> RenderableType | None:
        """What moves while nothing is printed: the spinners of the task and its subagents."""
        if not self._label:
            return None
        return _Waiting(self._label, self._tail, self._step_started, self.running_subagents)

    def _show(self, renderable: RenderableType, transient: bool) -> None:
        self._live = Live(
            renderable,
            console=self.console,
            refresh_per_second=8,
            transient=transient,
            redirect_stdout=False,
            redirect_stderr=False,
            vertical_overflow="visible",
        )
        self._live.start()

    def _settle(self) -> None:
        """Stop what moves, before anything is printed for good."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        self._streamed = None
        self._speaker = None

    def nested(self, line: Text, speaker: str, header: Text | None = None) -> None:
        """A line of subagent `speaker`'s, printed for good under the step that started it;
        what was moving moves on (subagents run at the same time as the task's own steps).
        Their lines interleave, so a line that follows another's comes under its `header`."""
        follows = self._speaker == speaker
        self._settle()
        if header is not None and not follows:
            self.console.print(header)
        self.console.print(line)
        self._speaker = speaker
        self._wait()

    def _end_step(self) -> None:
        """The step's command printed its last: its tail stays (piped: is printed once)."""
        if self._tail is not None:
            for line in self._tail.shown():
                self.console.print(line)
            self._tail = None


class SubagentLines:
    """A subagent's progress, indented under its `agent` step and named, one line each: its
    steps and how they ended, its text once a turn is complete."""

    def __init__(self, screen: Screen, shown: SubagentShown) -> None:
        self.screen = screen
        self.indent = "    " * shown.depth
        self.name = shown.id
        self._text: list[str] = []
        self._running = _Running(self.indent, shown.id)
        screen.running_subagents[shown.id] = self._running
        what = f"{shown.type}: {visible(shown.description, lines=False)}"
        self._header = Text(f"{self.indent}⎿ {self.name}", "bold cyan")
        screen.nested(Text(f"{self.indent}⎿ {self.name} {what}", "bold cyan"), self.name)

    def _line(self, text: str, style: str = "") -> None:
        self.screen.nested(Text(f"{self.indent}  {text}", style), self.name, self._header)

    def _flush(self) -> None:
        said = visible("".join(self._text)).strip()
        self._text.clear()
        for line in said.splitlines()[:OUTPUT_TAIL_LINES]:
            self._line(line, "dim")

    def step(self, tool: str, summary: str) -> None:
        self._flush()
        self._running.doing(tool)
        self._line(f"▸ {tool}: {visible(summary, lines=False)}" if summary else f"▸ {tool}", "blue")

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        self._running.doing("thinking")
        self._line(f"{'✓' if ok else '✗'} {visible(detail, lines=False)}", "" if ok else "red")

    def output(self, lines: str) -> None:
        pass  # the step's end says how it went; its command's lines stay the subagent's

    def text(self, delta: str) -> None:
        self._text.append(delta)

    def plan(self, items: list[PlanItem]) -> None:
        done = sum(item.status == "completed" for item in items)
        self._line(f"plan {done}/{len(items)}", "dim")

    def steered(self, text: str) -> None:
        pass

    def notice(self, text: str) -> None:
        self._flush()
        self._line(f"({visible(text, lines=False)})", "yellow")

    def subagent(self, shown: SubagentShown) -> SubagentLines:
        return SubagentLines(self.screen, shown)

    def finished(self, ok: bool, detail: str) -> None:
        """Its last words; how it ended is its `agent` step's result, printed by the agent
        that started it (a cancelled one's: the task's outcome)."""
        self.screen.running_subagents.pop(self.name, None)
        self._flush()
