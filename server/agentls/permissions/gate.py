"""The permission gate: the one place a tool call is weighed, put to the user, and refused.

Every tool call passes here, through its one entry, `Gate.ask` (`tools.run_tool` for each
call; a tool whose question depends on what it is about to do is only held to the deny rules
there, and asks from its handler, with that). `ask` weighs, in
this order: the rules (`decide.py`, the last word on deny) and the PreToolUse hooks'
verdict on the call (a value the caller passes, never over a deny rule); then what the call
is (`Source`) with the session's mode, `approveCommands: always` and what the user allowed
for this task (`Grants`). What needs the user is asked once, through `Approver.approve`,
which nothing else calls for a tool call. The answer is a `Permit` saying what the tool may
do (whether the user reviews it, whether it stays in the sandbox), or a `Refusal`: one
exception, worded here and nowhere else.

Model: opencode's `PermissionNext.ask`; the launcher (`shell/launch.py`) is its twin for
the programs agentls starts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..interfaces import Approver, AsksWrites, Unanswered
from ..interfaces import Decision as Answer
from .decide import Decision, decide, unreadable
from .modes import Mode, SessionMode
from .rules import Rule, Rules, Verdict

Source = Literal["call", "ahead", "command", "tool", "fetch", "edit", "write"]
"""What a call is, which sets what passes without the user:
`call`: any tool as `run_tool` sees it; it passes unless a rule or a hook says ask.
`ahead`: a tool that asks from its handler (`Tool.gated`), as `run_tool` sees it: only a deny
rule refuses it here, before its handler runs; its own question weighs the rest.
`command` (bash), `tool` (a tool from elsewhere: MCP) and `fetch` (web_fetch, per host):
asked unless allowed by a rule, a hook, `approveCommands: always` or "allow for this task".
`edit`: never put to the approver: the change is reviewed (a permit `reviewed`) unless an
allow rule, a hook's allow or the acceptEdits mode lets it land.
`write`: an edit to review that the editor cannot show (an LSP client without
workspace/applyEdit), which agentls would write itself: asked as a command is
(`AsksWrites.approve_write`)."""

_ASKED_BY_DEFAULT: frozenset[Source] = frozenset({"command", "tool", "fetch", "write"})
_HOOKED = "a PreToolUse hook said so"
_PLAIN_HOST = re.compile(r"[a-z0-9.:-]{1,253}")
"""A host an "always" answer may name in a rule: no pattern character can widen it."""


def fetch_question(url: str) -> str:
    """A fetch as every door asks it."""
    return f"Fetch {url}?"


def always_for(host: str) -> str:
    """The answer that allows a fetch's host for the rest of the session."""
    return f"Always for {host}"


@dataclass
class Grants:
    """What the user allowed for the rest of the task ("allow for this task"): shared by the
    task's calls and its subagents'."""

    for_task: bool = False
    """Commands, fetches and MCP tools pass unasked (an ask rule still asks)."""


@dataclass(frozen=True, kw_only=True)
class Request:
    """What a tool is about to do, as the gate weighs it."""

    source: Source
    tool: str
    """The tool's name, as the rules name it."""
    arguments: Mapping[str, Any]
    """What the rules see: the command, the path relative to the root, the URL."""
    shown: str = ""
    """What the user is asked about: the command line, a fetch's URL, ..."""
    host: str = ""
    """A fetch's host, which the question and a refusal name."""


@dataclass(frozen=True)
class Permit:
    """What the tool may do with the call the gate let through."""

    reviewed: bool
    """The user sees it before it takes effect: they were asked and allowed it, or (an
    edit) it goes to their review."""
    sandboxed: bool = True
    """It stays in the sandbox: only a command the user allowed, with the
    approvedCommandsUnsandboxed setting, leaves it."""


By = Literal["rule", "hook", "user", "nobody"]


class Refusal(Exception):
    """The gate's one refusal: who refused (a deny rule, a PreToolUse hook, the user, or
    nobody being there to ask), why, and what the model is told."""

    def __init__(self, by: By, request: Request | None, why: str, detail: str = "") -> None:
        self.by, self.request, self.why, self.detail = by, request, why, detail
        super().__init__(self.words())

    def words(self) -> str:
        """For the model, and (its first sentence) the user."""
        if self.by == "hook":
            return f"A PreToolUse hook blocked this call: {self.why}"
        if self.by == "rule":
            return f"Denied by {self.why}. Do not retry it; take another way."
        asked = f" It was asked because {self.why}." if self.why else ""
        if self.by == "nobody":
            return f"{self.detail}{asked}"
        subject = _subject(self.request)
        return f"The user denied {subject}.{asked} Do not retry it; ask or take another way."

    def reason(self) -> str:
        """Why a change was not written, as an edit's result words it ("The edit of a.py was
        not applied: <reason>.")."""
        if self.by == "user":
            return "the user rejected it"
        return self.detail if self.by == "nobody" else self.words()


def _subject(request: Request | None) -> str:
    if request is None or request.source == "tool":
        return "this call"
    if request.source == "command":
        return "this command"
    if request.source == "fetch":
        return f"fetching from {request.host}"
    return f"this {request.tool} call"


def hooked(decision: str | None, reason: str | None) -> Verdict | None:
    """The PreToolUse hooks' verdict on a call, as the gate weighs it (`Gate.hook`); raises
    the Refusal of a call they denied, before anything else is weighed."""
    if decision == "deny":
        raise Refusal("hook", None, reason or "")
    return "allow" if decision == "allow" else "ask" if decision == "ask" else None


@dataclass(frozen=True, kw_only=True)
class Gate:
    """One task's permissions, as they stand for one call."""

    rules: Rules
    root: Path
    approver: Approver
    mode: Mode = "default"
    approve_always: bool = False
    """The approveCommands setting is "always" (or --yes): commands pass unasked."""
    unsandboxed_when_approved: bool = False
    """The approvedCommandsUnsandboxed setting."""
    shell_sandboxed: bool = False
    """The task's shell runs commands in a sandbox (so leaving it is worth saying)."""
    grants: Grants = field(default_factory=Grants)
    session: SessionMode | None = None
    """Where an "always" answer is kept as a rule, for the rest of the session."""
    hook: Verdict | None = None
    """The PreToolUse hooks' verdict on this call (`hooked`)."""

    def decision(self, tool: str, arguments: Any) -> Decision | None:
        """What the rules say of the call, or the hooks' verdict where no deny rule speaks;
        None when neither does."""
        decided = decide(self.rules, tool, arguments, self.root)
        if self.hook is not None and (decided is None or decided.verdict != "deny"):
            return Decision(self.hook, reason=_HOOKED)
        return decided

    def unreadable(self) -> tuple[Rule, ...]:
        """The deny and ask rules on reading paths, which a search leaves out."""
        return unreadable(self.rules)

    async def ask(self, request: Request) -> Permit:
        """What the tool may do with the call; raises Refusal when it may not."""
        decided = self.decision(request.tool, request.arguments)
        said = decided.verdict if decided is not None else None
        if decided is not None and said == "deny":
            raise Refusal("rule", request, decided.why)
        if request.source == "ahead":  # its handler asks, with what it is about to do
            return Permit(reviewed=False)
        if request.source == "edit":
            # An ask rule reviews even in acceptEdits; an allow rule lands it as acceptEdits does.
            return Permit(said == "ask" or (said != "allow" and self.mode != "acceptEdits"))
        if said == "allow" or (said is None and not self._asks_by_default(request)):
            return Permit(reviewed=False)
        why = decided.why if decided is not None else ""
        return await self._put(request, why)

    def _asks_by_default(self, request: Request) -> bool:
        if request.source not in _ASKED_BY_DEFAULT:
            return False
        return not (self.approve_always or self.grants.for_task)

    async def _put(self, request: Request, why: str) -> Permit:
        """The call put to the user, once."""
        command = request.source == "command"
        unsandboxed = command and self.unsandboxed_when_approved
        host = request.host if request.source == "fetch" else ""
        fetch = {"host": host} if host else {}  # a question about a fetch, asked as one
        try:
            if request.source == "write":
                answer = await self._write_question(request.shown)
            else:
                answer = await self.approver.approve(
                    request.shown, unsandboxed and self.shell_sandboxed, **fetch
                )
        except Unanswered as nobody:
            raise Refusal("nobody", request, why, str(nobody)) from None
        if answer == "deny":
            raise Refusal("user", request, why)
        if answer == "allow_task" and request.source in _ASKED_BY_DEFAULT:
            self.grants.for_task = True
        if answer == "allow_always" and self.session and _PLAIN_HOST.fullmatch(host):
            self.session.keep(Rule("web_fetch", f"domain:{host}"))
        return Permit(reviewed=True, sandboxed=not unsandboxed)

    async def _write_question(self, description: str) -> Answer:
        if not isinstance(self.approver, AsksWrites):  # its editor shows every edit itself
            raise Unanswered(f"Nobody can be asked whether agentls may {description}.")
        return await self.approver.approve_write(description)
