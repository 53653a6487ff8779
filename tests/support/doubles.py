"""In-memory stand-ins for the loop's interfaces: an editor, a scripted model, a progress log."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentls import redaction
from agentls.agent.conversation import Conversation
from agentls.agent.loop import Agent
from agentls.agent.memory import ProjectMemory
from agentls.disk import files
from agentls.edits import apply_hunks
from agentls.interfaces import (
    Change,
    Decision,
    Landed,
    ModelError,
    Place,
    PlanItem,
    Problem,
    Progress,
    Shell,
    SubagentShown,
    Turn,
    Usage,
    Workspace,
)
from agentls.settings.assembly import Settings
from agentls.shell.subprocess_shell import SubprocessShell
from agentls.tools import Tool, ToolContext
from agentls.wiring import loop_limits


def is_running(pid: int) -> bool:
    """Whether `pid` runs; a zombie (killed, not yet reaped by a sandbox's init) does not."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def running_argv(*argv: str) -> list[int]:
    """Host pids of the running processes whose command line is exactly `argv`: a process in
    a sandbox's PID namespace cannot tell its pid outside, so tests find it by a unique one
    (`sleep 300.417`)."""
    wanted = "".join(f"{word}\0" for word in argv).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == wanted and is_running(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


BROKEN_BWRAP = "bwrap: No permissions to create new namespace"


def path_with_a_broken_bwrap(folder: Path) -> str:
    """A PATH on which `bwrap` fails as it does where user namespaces are off."""
    folder.mkdir()
    (folder / "bwrap").write_text(f"#!/bin/sh\necho '{BROKEN_BWRAP}' >&2\nexit 1\n")
    (folder / "bwrap").chmod(0o755)
    return f"{folder}:{os.environ['PATH']}"


def unique_seconds() -> str:
    """A `sleep` length no other test's processes share (tests run in parallel)."""
    return f"300.{os.getpid()}{next(_counter)}"


_counter = itertools.count()


class MemoryEditor:
    """An editor with some documents open (unsaved text kept in memory), the disk for the rest.

    `review` decides per change which hunks the user accepts (all by default).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.open: dict[Path, str] = {}
        self.proposals: list[Change] = []
        self.review: Callable[[Change], list[bool]] = lambda change: [True] * len(change.hunks)

    async def read_text(self, path: Path) -> str:
        if path in self.open:
            return self.open[path]
        return files.read_text(self.root, path)

    def open_documents(self) -> dict[Path, str]:
        return dict(self.open)

    def open_text(self, path: Path) -> str | None:
        return self.open.get(path)

    async def delete(self, path: Path) -> bool:
        self.open.pop(path, None)
        path.unlink()
        return True

    async def propose(self, change: Change) -> Landed:
        self.proposals.append(change)
        keep = self.review(change)
        if not any(keep):
            return Landed(False, rejected_reason="rejected in review")
        text = apply_hunks(
            change.old_text or "", [h for h, k in zip(change.hunks, keep, strict=True) if k]
        )
        if change.path in self.open:
            self.open[change.path] = text
        files.write_atomic(self.root, change.path, text)
        return Landed(True, text)


class ScriptedModel:
    """Answers with the scripted turns in order; a callable turn sees the messages so far."""

    def __init__(self, *turns: Turn | Callable[[list[dict[str, Any]]], Turn] | Exception) -> None:
        self.turns = list(turns)
        self.requests: list[list[dict[str, Any]]] = []
        self.tool_names: list[list[str]] = []
        """The names of the tools offered, per request."""
        self.max_tokens: list[int | None] = []
        """The room the loop left each answer (`respond`'s `max_tokens`), per request."""

    async def respond(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        *,
        on_notice: Callable[[str], None] | None = None,
        max_tokens: int | None = None,
    ) -> Turn:
        self.requests.append([dict(m, content=list(m["content"])) for m in messages])
        self.max_tokens.append(max_tokens)
        self.tool_names.append([tool["name"] for tool in tools])
        if not self.turns:
            raise ModelError("script exhausted")
        turn = self.turns.pop(0)
        if isinstance(turn, Exception):
            raise turn
        if callable(turn):
            turn = turn(messages)
        for block in turn.content:
            if block["type"] == "text":
                on_text(block["text"])
        return turn


def say(text: str) -> Turn:
    return Turn([{"type": "text", "text": text}], "end_turn", Usage(10, 5))


_ids = iter(range(1, 10**9))


def call(name: str, stop_reason: str = "tool_use", **arguments: Any) -> Turn:
    block = {"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": arguments}
    return Turn([block], stop_reason, Usage(10, 5))


def usage_of(result: dict[str, Any]) -> Usage:
    """The counts of a task result's usage (the protocol's form), as a Usage."""
    usage = result["usage"]
    return Usage(
        usage["inputTokens"],
        usage["outputTokens"],
        usage["cacheReadTokens"],
        usage["cacheWriteTokens"],
    )


def results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool results in the last user message."""
    return [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []
        self.details: list[str] = []
        self.shown: list[SubagentShown] = []

    def step(self, tool: str, summary: str) -> None:
        self.events.append(("step", tool, summary))

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        self.events.append(("done", tool, "ok" if ok else "error"))
        self.details.append(detail)

    def text(self, delta: str) -> None:
        self.events.append(("text", delta))

    def plan(self, items: list[PlanItem]) -> None:
        self.events.append(("plan", *(f"{item.status}: {item.content}" for item in items)))

    def steered(self, text: str) -> None:
        self.events.append(("steered", text))

    def notice(self, text: str) -> None:
        self.events.append(("notice", text))

    def output(self, lines: str) -> None:
        self.events.append(("output", lines))

    def subagent(self, shown: SubagentShown) -> SubagentRecorder:
        self.events.append(("subagent", shown.id, shown.type, shown.description))
        self.shown.append(shown)
        return SubagentRecorder(self, shown.id)


class SubagentRecorder(Recorder):
    """A subagent's progress: its events in its task's list, each first naming it."""

    def __init__(self, task: Recorder, agent_id: str) -> None:
        super().__init__()
        self.task, self.agent_id = task, agent_id
        self.events = _Tagged(task.events, agent_id)  # type: ignore[assignment]

    def finished(self, ok: bool, detail: str) -> None:
        self.task.events.append((self.agent_id, "finished", "ok" if ok else "error", detail))


class _Tagged(list):  # type: ignore[type-arg]
    def __init__(self, into: list[tuple[str, ...]], tag: str) -> None:
        super().__init__()
        self.into, self.tag = into, tag

    def append(self, event: tuple[str, ...]) -> None:
        self.into.append((self.tag, *event))


class Approver:
    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []
        self.unsandboxed: list[bool] = []
        self.hosts: list[str] = []
        """The host of each question that was a fetch's ("" for any other)."""

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        self.asked.append(command)
        self.unsandboxed.append(unsandboxed)
        self.hosts.append(host)
        return self.answers.pop(0) if self.answers else "deny"

    async def approve_project(self, what: str) -> bool:
        self.asked.append(f"project: {what}")
        return (self.answers.pop(0) if self.answers else "deny") != "deny"

    async def approve_plan(self, plan: str) -> bool:
        self.asked.append(f"plan: {plan}")
        return (self.answers.pop(0) if self.answers else "deny") != "deny"


class LanguageServersDouble:
    """The editor's language servers: `problems` answers each request with the next of the
    lists given (the last one again when they run out; None: the editor does not know the
    files); places and symbols as set."""

    def __init__(self, *problems: list[Problem] | None) -> None:
        self.answers = list(problems)
        self.asked: list[tuple[Any, ...]] = []
        self.places_found: list[Place] | None = []
        self.symbols_found: list[Place] | None = []

    async def problems(self, paths: list[Path] | None) -> dict[Path, list[Problem]] | None:
        self.asked.append(("problems", paths))
        if not self.answers:
            return None
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if answer is None:  # the editor does not know the file
            return {}
        by_file: dict[Path, list[Problem]] = {path: [] for path in paths or []}
        for problem in answer:
            by_file.setdefault(problem.path, []).append(problem)
        return by_file

    async def places(self, kind: str, path: Path, line: int, before: str) -> list[Place] | None:
        self.asked.append((kind, path, line, before))
        return self.places_found

    async def symbols(self, query: str) -> list[Place] | None:
        self.asked.append(("symbols", query))
        return self.symbols_found


def tool_context(
    root: Path,
    approver: Approver | None = None,
    *,
    workspace: Workspace | None = None,
    shell: Shell | None = None,
    progress: Progress | None = None,
    extra_tools: frozenset[str] = frozenset(),
    table: Mapping[str, Tool] | None = None,
    **settings: Any,
) -> ToolContext:
    """What a tool runs with on `root`: by default an in-memory editor that accepts every edit,
    a real shell without the environment's secrets, and commands run without asking (the
    approver, which denies unless told otherwise, is asked only if `approve_commands` says
    so); `settings` are `Settings` fields."""
    return ToolContext(
        workspace=workspace or MemoryEditor(root),
        shell=shell or SubprocessShell(root, redaction.scrubbed(os.environ)),
        approver=approver or Approver(),
        settings=Settings(**{"approve_commands": "always", **settings}),
        progress=progress,
        extra_tools=extra_tools,
        table=table,
    )


def make_agent(
    root: Path,
    model: ScriptedModel,
    session: Conversation | None = None,
    memory: ProjectMemory | None = None,
    extra_tools: frozenset[str] = frozenset(),
    table: Mapping[str, Tool] | None = None,
    **settings: Any,
) -> tuple[Agent, Recorder]:
    """An agent on `root` with an in-memory editor that accepts every edit, commands allowed;
    `table` replaces the tool table it is offered from (`tools.TOOLS`)."""
    progress = Recorder()
    tools = tool_context(root, progress=progress, extra_tools=extra_tools, table=table, **settings)
    limits = loop_limits(tools.settings)
    return Agent(model, tools, progress, session or Conversation(), limits, memory), progress
