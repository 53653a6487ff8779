"""The small interfaces the agent loop talks to.

The loop knows nothing of LSP or terminals: a front end hands it a model, a workspace
(the editor's view of the files), a shell, an approver for commands and a progress sink.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from .edits import Hunk

Block = dict[str, Any]
"""A content block of the Messages API, as plain JSON-ready data."""
SAID = "agentls_said"
"""Marks a user text block that is agentls's, not the user's (a note that a task stopped, the
user's words added to a running task, what undo did): its value is the words of the user it
holds, "" for none. Saved with the conversation, so a replay (ACP's `session/load`) shows the
user's own words only; taken off before a request (the API refuses extra fields)."""


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def add(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write

    @property
    def prompt(self) -> int:
        """All the prompt tokens, however billed."""
        return self.input + self.cache_read + self.cache_write

    @property
    def cache_hit_rate(self) -> float:
        return self.cache_read / self.prompt if self.prompt else 0.0


@dataclass
class Turn:
    """One answer of the model: its content blocks, why it stopped, what it cost."""

    content: list[Block]
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)


class ModelError(Exception):
    """The model could not be asked (after the client's retries).

    `hint` tells the user what to do about it.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class PromptTooLong(ModelError):
    """The API refused the prompt as longer than the model's context window.

    `tokens` is the prompt's length when the API said it.
    """

    def __init__(self, message: str, hint: str = "", tokens: int | None = None) -> None:
        super().__init__(message, hint)
        self.tokens = tokens


Messages = list[dict[str, Any]]
"""A conversation as the Messages API has it: role and content blocks, oldest first."""
Schemas = list[dict[str, Any]]
"""The tools offered, each its name, description and input schema."""
OnText = Callable[[str], None]
"""Where a turn's text goes as it streams."""


class Model(Protocol):
    async def respond(
        self,
        system: str,
        messages: Messages,
        tools: Schemas,
        on_text: OnText,
        *,
        on_notice: OnText | None = None,
        max_tokens: int | None = None,
    ) -> Turn:
        """Ask for the next turn, streaming its text to `on_text`; what agentls says about
        the asking (an answer that broke off is asked again) goes to `on_notice`, never to
        `on_text`. `max_tokens`: the room the context window leaves the answer, when the
        caller knows it (the answer's limit is the smaller of it and the setting). Raises
        ModelError."""
        ...


@dataclass(kw_only=True)
class Change:
    """A proposed change of one file: `old_text` is None for a new file."""

    path: Path
    old_text: str | None
    new_text: str
    hunks: list[Hunk]
    tool: str
    reviewed: bool = True
    """False when the change lands without the user's review (the acceptEdits mode, an allow
    rule): the workspace applies it as it is, still checkpointed before."""


@dataclass
class Landed:
    """What the editor reports after a proposal.

    `text` is the file's text after the user's review, or None when the editor applied the
    change where the server cannot see it. `rejected_reason` is set when nothing was applied.
    `on_disk` says whether a following shell command will see the text.
    """

    applied: bool
    text: str | None = None
    rejected_reason: str = ""
    on_disk: bool = True
    question: str = ""
    """Set, with nothing applied, when the editor cannot show a change for review and
    agentls would write it itself (an LSP client without workspace/applyEdit): what the
    user must allow first ("change a.py (...)"), which the permission gate asks."""


class Workspace(Protocol):
    root: Path

    async def read_text(self, path: Path) -> str:
        """The editor's current text of `path` (unsaved changes included), else the disk's.

        Raises OSError (FileNotFoundError, IsADirectoryError, ...), or files.NotText for a
        binary, non-UTF-8, oversized or not regular file.
        """
        ...

    async def propose(self, change: Change) -> Landed:
        """Put a change to the user and report what landed."""
        ...

    def open_documents(self) -> dict[Path, str]:
        """The editor's text of each document it has open (none outside an editor)."""
        ...


@dataclass
class ShellResult:
    exit_code: int | None
    output: str
    timed_out: bool = False
    sandbox_note: str | None = None
    """One line when the output shows that the sandbox stopped the command."""


class ShellRefused(Exception):
    """The shell runs no command: the settings require a sandbox this machine cannot give."""


class CommandCancelled(asyncio.CancelledError):
    """The task was cancelled while a command ran: the command is killed, and `output` is
    what it printed until then (cut and redacted as a result's), for the user and the model."""

    def __init__(self, output: str) -> None:
        super().__init__(output)
        self.output = output


OutputSink = Callable[[str], None]
"""Where a running command's output goes as it comes: whole lines, secrets redacted."""


@dataclass(frozen=True)
class Command:
    """A command for the `Shell`: what runs, for how long, and what of its output is kept."""

    text: str
    timeout: float
    output_limit: int
    """At most about this many characters of the output are kept."""
    sandboxed: bool = True
    """False: outside the sandbox (only a command the user saw and allowed so)."""
    on_output: OutputSink | None = None
    """Each line of output as it comes."""


class Shell(Protocol):
    @property
    def sandboxed(self) -> bool:
        """Whether commands run confined (unless run with `sandboxed=False`)."""
        ...

    async def run(self, command: Command) -> ShellResult:
        """Run `command`. Raises ShellRefused.

        Cancelling the awaiting task kills it, and raises CommandCancelled.
        """
        ...


Decision = Literal["allow", "allow_task", "allow_always", "deny"]
"""`allow_always`: a fetch's host allowed for the rest of the session (offered for a fetch)."""


class Unanswered(Exception):
    """Raised by `Approver.approve` when nobody can answer (a headless run, an editor that
    cannot ask, a background task): the message says why, in the door's words, and the
    permission gate refuses the call with it."""


@runtime_checkable
class AsksWrites(Protocol):
    """An approver whose editor cannot show an edit for review (an LSP client without
    workspace/applyEdit), so that agentls writes it itself once allowed."""

    async def approve_write(self, description: str) -> Decision:
        """Whether agentls may `description` ("create notes.md (...)") on disk itself
        (only the permission gate asks); raises Unanswered when nobody can answer."""
        ...


class Approver(Protocol):
    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        """Ask the user about a tool call (only the permission gate does,
        `permissions/gate.py`); `unsandboxed`: an allowed command runs outside the sandbox,
        which the question must say. `host`: the call fetches `command`, a URL, from it,
        asked in the gate's words (`gate.fetch_question`), with "always for this host"
        (`allow_always`) among the answers where the door can offer it. Raises Unanswered
        when nobody can answer."""
        ...

    async def approve_plan(self, plan: str) -> bool:
        """Show the model's plan (the plan mode's end) and ask whether to carry it out."""
        ...

    async def approve_project(self, what: str) -> bool:
        """Whether the project may `what` ("start the project's MCP server x (cmd)"): asked
        once per exact definition, never answered by `--yes` or an "allow for this task"."""
        ...


class Hooks(Protocol):
    """The user's hooks (Claude Code's events) as the loop calls them."""

    async def submitted(self, task: str, first: bool) -> tuple[str, str | None]:
        """UserPromptSubmit (and SessionStart for a session's `first` task): the task with
        the context the hooks add, and why it is blocked (None: it runs)."""
        ...

    async def stopping(self) -> str | None:
        """Stop: what to tell the model when a hook wants it to go on, else None."""
        ...

    async def compacting(self) -> None:
        """PreCompact."""
        ...

    async def before_tool(self, tool: str, arguments: Any) -> tuple[str | None, str | None]:
        """PreToolUse: the hooks' decision (allow, ask, deny; None) and its reason."""
        ...

    async def after_tool(self, tool: str, arguments: Any, result: str, is_error: bool) -> str:
        """PostToolUse: what a blocking hook adds to the result for the model, else ""."""
        ...

    async def subagent_started(self, agent_id: str, agent_type: str) -> str:
        """SubagentStart: the context the hooks add to the subagent's task ("" for none)."""
        ...

    async def subagent_stopping(self, agent_id: str, agent_type: str, active: bool) -> str | None:
        """SubagentStop: what to tell the subagent when a hook wants it to go on, else None;
        `active`: it goes on because such a hook said so before."""
        ...


PlanStatus = Literal["pending", "in_progress", "completed"]
PLAN_STATUSES: tuple[PlanStatus, ...] = ("pending", "in_progress", "completed")


@dataclass(frozen=True)
class PlanItem:
    """One line of the model's plan for a task (the todo_write tool)."""

    content: str
    status: PlanStatus

    def as_dict(self) -> dict[str, str]:
        return {"content": self.content, "status": self.status}


class Progress(Protocol):
    def step(self, tool: str, summary: str) -> None:
        """A tool step starts."""
        ...

    def step_done(self, tool: str, summary: str, ok: bool, detail: str, output: str = "") -> None:
        """A tool step ended; `ok` says whether it did what was asked (a command that exited
        non-zero did not), `detail` says what happened in the user's words (one line),
        `output` is the whole result the model got (cut to the output limit, secrets
        redacted)."""
        ...

    def output(self, lines: str) -> None:
        """Lines the step's command printed, as they come (each ends with a line break;
        secrets redacted). The step's end brings the whole output again, cut as the model's."""
        ...

    def text(self, delta: str) -> None:
        """A piece of the model's streamed text."""
        ...

    def notice(self, text: str) -> None:
        """agentls's own word in the middle of the model's text, not part of it (an answer
        that broke off is asked again)."""
        ...

    def plan(self, items: list[PlanItem]) -> None:
        """The model wrote its plan anew (the whole list, in order)."""
        ...

    def steered(self, text: str) -> None:
        """Text the user added to the running task is on its way to the model."""
        ...

    def subagent(self, shown: SubagentShown) -> SubagentProgress:
        """A subagent starts: where its own text, steps and output go. Subagents of one turn
        run at the same time, so theirs come interleaved with each other's and the task's."""
        ...


@dataclass(frozen=True)
class SubagentShown:
    """A subagent as the user sees it: `id` is unique in the session (`agent-3`),
    `parent_step` the id of the `agent` call that started it, `depth` 1 for the task's own."""

    id: str
    type: str
    description: str
    parent_step: str
    depth: int = 1


class SubagentProgress(Progress, Protocol):
    def finished(self, ok: bool, detail: str) -> None:
        """The subagent ended: `ok` unless it failed, was cut short or cancelled; `detail` its
        figures in one line (`done · 5 steps · 12k tokens`)."""
        ...


class Journal(Protocol):
    """Where a session is saved as it goes (`sessions.SessionLog`)."""

    id: str

    def task(self, title: str, request: str) -> None:
        """A task starts. Raises OSError."""
        ...

    def sync(self, messages: list[dict[str, Any]]) -> None:
        """Save what changed in the conversation since the last call. Raises OSError."""
        ...


CheckpointKind = Literal["task", "step", "end", "undo"]
"""Before a task, before a mutating step, after a task, before an undo."""


class Memory(Protocol):
    """Project memory, `AGENTS.md` (`agent/memory.py`), read once per task."""

    def prompt(self) -> str:
        """The memory for the system prompt ("" when there is none)."""
        ...

    def note(self, tool: str, arguments: object, noted: dict[str, str]) -> str:
        """The note to append to a successful call's result: for a call that read or edited
        a file, the subfolders' memory not yet in `noted` (label to text, updated); else ""."""
        ...


@dataclass(frozen=True, kw_only=True)
class CheckpointMark:
    """Where in a session a checkpoint stands, and what it may have to cover."""

    kind: CheckpointKind
    session: str
    task: int
    step: int | None
    label: str
    touches: list[str] | None = None
    """For a step, the only files it may change (relative to the root), when known; None:
    any."""


class Checkpoints(Protocol):
    """Recording the workspace's files so a task can be undone (`checkpoints.py`)."""

    async def record(self, mark: CheckpointMark) -> None:
        """Record the files now. Never raises: a failure is logged and the task goes on."""
        ...

    async def changes_in_session(self, session: str) -> list[str]:
        """The files changed since the session's first checkpoint, one line each
        ("app.py (modified)"); empty when unknown."""
        ...


@dataclass(frozen=True)
class Problem:
    """A diagnostic the editor's language servers report; `line` counts from 1."""

    path: Path
    line: int
    severity: Literal["error", "warning", "information", "hint"]
    message: str
    source: str = ""


@dataclass(frozen=True)
class Place:
    """A place in a file (a definition, a reference, a symbol); `line` counts from 1."""

    path: Path
    line: int
    name: str = ""
    """A symbol's name and kind, e.g. `class Parser`; empty for a definition or reference."""


class Navigation(Protocol):
    """Where a symbol is defined or used: the editor's language servers in the LSP door,
    agentls's own elsewhere (`tools/editor_tools.py` asks either alike)."""

    async def places(
        self, kind: Literal["definition", "references"], path: Path, line: int, before: str
    ) -> list[Place] | None:
        """Where the symbol at (`line`, just after the text `before` on it) is defined or
        used; None when no server gave an answer in time."""
        ...


class LanguageServers(Navigation, Protocol):
    """What the editor's own language servers know, asked through the editor.

    Each method answers None when the editor does not serve it or gave no answer in time.
    """

    async def problems(self, paths: list[Path] | None) -> dict[Path, list[Problem]] | None:
        """The diagnostics of each of `paths` the editor knows (has open, or has diagnostics
        for), once its language servers have caught up with the latest change; None: every
        file it has them for."""
        ...

    async def symbols(self, query: str) -> list[Place] | None:
        """The workspace's symbols matching `query`."""
        ...


class OwnLanguageServers(Navigation, Protocol):
    """Language servers agentls starts itself outside the LSP door (`eyes/`), asked after
    each edit and by `definition` and `references`."""

    def known(self, path: Path) -> list[Problem] | None:
        """What the servers said of `path` last, without asking; None when none has."""
        ...

    async def problems_now(self, path: Path) -> tuple[list[Problem], list[str]]:
        """`path`'s problems once the servers have its current text, and lines for the
        model about servers that are out or late."""
        ...
