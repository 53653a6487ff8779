"""The permission gate as a table: what a call is (its source), the rules, the PreToolUse
hooks' verdict, the mode and the settings, and the user's answer, to what the tool may do
(a Permit) or who refused it (a Refusal), and whether the user was asked."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from agentls.interfaces import Decision, Unanswered
from agentls.permissions.gate import Gate, Grants, Permit, Refusal, Request, Source, hooked
from agentls.permissions.modes import Mode
from agentls.permissions.rules import Verdict, parse_rules

_ARGUMENTS: dict[Source, tuple[str, dict[str, Any]]] = {
    "call": ("read_file", {"path": "notes.md"}),
    "command": ("bash", {"command": "make"}),
    "tool": ("mcp__github__create_issue", {"title": "x"}),
    "fetch": ("web_fetch", {"url": "https://docs.example/a"}),
    "edit": ("edit_file", {"path": "notes.md"}),
}
_RULE = {
    "call": "Read(notes.md)",
    "command": "Bash(make)",
    "tool": "mcp__github__create_issue",
    "fetch": "web_fetch(domain:docs.example)",
    "edit": "Edit(notes.md)",
}


class _Approver:
    """Answers with `answer`, or raises Unanswered for None (nobody can be asked)."""

    def __init__(self, answer: Decision | None) -> None:
        self.answer = answer
        self.asked: list[tuple[str, bool]] = []

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        self.asked.append((command, unsandboxed))
        if self.answer is None:
            raise Unanswered("Refused: nobody could approve it.")
        return self.answer

    async def approve_plan(self, plan: str) -> bool:
        raise AssertionError("the gate asks only about tool calls")

    async def approve_project(self, what: str) -> bool:
        raise AssertionError("the gate asks only about tool calls")


@dataclass
class Row:
    source: Source
    rule: Verdict | None = None
    """A rule naming the call, of this kind."""
    hook: Verdict | None = None
    mode: Mode = "default"
    always: bool = False
    for_task: bool = False
    answer: Decision | None = "allow"
    unsandboxed: bool = False
    """The approvedCommandsUnsandboxed setting (the shell is sandboxed)."""
    extra: dict[str, Any] = field(default_factory=dict)


def _gate(tmp_path: Path, row: Row, approver: _Approver) -> Gate:
    rules = parse_rules({row.rule: [_RULE[row.source]]} if row.rule else {})
    return Gate(
        rules=rules,
        root=tmp_path,
        approver=approver,
        mode=row.mode,
        approve_always=row.always,
        unsandboxed_when_approved=row.unsandboxed,
        shell_sandboxed=True,
        grants=Grants(row.for_task),
        hook=row.hook,
    )


def _request(source: Source) -> Request:
    tool, arguments = _ARGUMENTS[source]
    return Request(source=source, tool=tool, arguments=arguments, shown=f"{tool} ?", host="h")


ASKED, UNASKED = True, False
TABLE: list[tuple[Row, Permit | str, bool]] = [
    # A tool call as run_tool puts it: passes unless an ask rule or a hook's ask.
    (Row("call"), Permit(reviewed=False), UNASKED),
    (Row("call", rule="ask"), Permit(reviewed=True), ASKED),
    (Row("call", rule="ask", answer="deny"), "user", ASKED),
    (Row("call", rule="ask", answer=None), "nobody", ASKED),
    (Row("call", rule="deny"), "rule", UNASKED),
    (Row("call", hook="ask", answer="deny"), "user", ASKED),
    (Row("call", rule="deny", hook="allow"), "rule", UNASKED),  # a hook never beats a deny rule
    # A command: asked unless a rule, a hook, approveCommands always or the task's grant.
    (Row("command"), Permit(reviewed=True), ASKED),
    (Row("command", answer="deny"), "user", ASKED),
    (Row("command", answer=None), "nobody", ASKED),
    (Row("command", rule="allow"), Permit(reviewed=False), UNASKED),
    (Row("command", always=True), Permit(reviewed=False), UNASKED),
    (Row("command", for_task=True), Permit(reviewed=False), UNASKED),
    (Row("command", hook="allow"), Permit(reviewed=False), UNASKED),
    (Row("command", rule="ask", always=True), Permit(reviewed=True), ASKED),
    (Row("command", rule="ask", for_task=True, answer="deny"), "user", ASKED),
    (Row("command", hook="ask", always=True), Permit(reviewed=True), ASKED),
    (Row("command", rule="deny", always=True), "rule", UNASKED),
    (Row("command", mode="acceptEdits"), Permit(reviewed=True), ASKED),  # edits only
    # Only a command the user allowed leaves the sandbox, and only with the setting.
    (Row("command", unsandboxed=True), Permit(reviewed=True, sandboxed=False), ASKED),
    (Row("command", unsandboxed=True, always=True), Permit(reviewed=False), UNASKED),
    (Row("fetch", unsandboxed=True), Permit(reviewed=True), ASKED),
    # A fetch and an MCP tool are asked as a command is.
    (Row("fetch"), Permit(reviewed=True), ASKED),
    (Row("fetch", answer="deny"), "user", ASKED),
    (Row("fetch", rule="allow"), Permit(reviewed=False), UNASKED),
    (Row("fetch", rule="deny"), "rule", UNASKED),
    (Row("fetch", for_task=True), Permit(reviewed=False), UNASKED),
    (Row("tool"), Permit(reviewed=True), ASKED),
    (Row("tool", answer="allow_task"), Permit(reviewed=True), ASKED),
    (Row("tool", always=True), Permit(reviewed=False), UNASKED),
    (Row("tool", rule="deny", hook="ask"), "rule", UNASKED),
    # An edit is never put to the approver: the permit says whether it is reviewed.
    (Row("edit"), Permit(reviewed=True), UNASKED),
    (Row("edit", mode="plan"), Permit(reviewed=True), UNASKED),
    (Row("edit", mode="acceptEdits"), Permit(reviewed=False), UNASKED),
    (Row("edit", mode="acceptEdits", rule="ask"), Permit(reviewed=True), UNASKED),
    (Row("edit", mode="acceptEdits", hook="ask"), Permit(reviewed=True), UNASKED),
    (Row("edit", rule="allow"), Permit(reviewed=False), UNASKED),
    (Row("edit", hook="allow"), Permit(reviewed=False), UNASKED),
    (Row("edit", always=True), Permit(reviewed=True), UNASKED),  # approveCommands: commands
    (Row("edit", rule="deny", mode="acceptEdits"), "rule", UNASKED),
]


@pytest.mark.parametrize(("row", "expected", "asked"), TABLE)
async def test_the_gate(tmp_path: Path, row: Row, expected: Permit | str, asked: bool) -> None:
    approver = _Approver(row.answer)
    gate = _gate(tmp_path, row, approver)
    if isinstance(expected, Permit):
        assert await gate.ask(_request(row.source)) == expected
    else:
        with pytest.raises(Refusal) as refused:
            await gate.ask(_request(row.source))
        assert refused.value.by == expected
    assert bool(approver.asked) is asked
    if asked:  # the question is the tool's words; "outside the sandbox" only for a command
        leaves = row.source == "command" and row.unsandboxed
        assert approver.asked == [(_request(row.source).shown, leaves)]


@pytest.mark.parametrize("source", ["command", "tool", "fetch", "call"])
async def test_allow_for_this_task_is_remembered_for_what_asks_by_default(
    tmp_path: Path, source: Source
) -> None:
    row = Row(source, answer="allow_task", rule="ask" if source == "call" else None)
    approver = _Approver(row.answer)
    gate = _gate(tmp_path, row, approver)
    await gate.ask(_request(source))
    # A read an ask rule named stays that read's answer: it grants no command.
    assert gate.grants.for_task is (source != "call")


async def test_a_deny_rule_is_refused_before_a_handler_asks(tmp_path: Path) -> None:
    approver = _Approver("deny")
    gate = _gate(tmp_path, Row("command", rule="deny"), approver)
    with pytest.raises(Refusal, match=r"^Denied by the permission rule Bash\(make\)\."):
        await gate.ask(Request(source="ahead", tool="bash", arguments={"command": "make"}))
    # Nothing said: the handler asks, with what it is about to do; nobody is asked yet.
    permit = await gate.ask(Request(source="ahead", tool="bash", arguments={"command": "ls"}))
    assert permit == Permit(reviewed=False) and approver.asked == []


@pytest.mark.parametrize(
    ("decision", "verdict"), [("allow", "allow"), ("ask", "ask"), (None, None), ("odd", None)]
)
def test_a_hooks_verdict_as_the_gate_weighs_it(decision: str | None, verdict: str | None) -> None:
    assert hooked(decision, "why") == verdict


def test_a_hooks_deny_is_refused_with_its_reason() -> None:
    with pytest.raises(Refusal) as refused:
        hooked("deny", "no rm here")
    assert refused.value.by == "hook"
    assert str(refused.value) == "A PreToolUse hook blocked this call: no rm here"


async def _refusal(tmp_path: Path, row: Row) -> str:
    with pytest.raises(Refusal) as refused:
        await _gate(tmp_path, row, _Approver(row.answer)).ask(_request(row.source))
    return str(refused.value)


@pytest.mark.parametrize(
    ("row", "words"),
    [
        (Row("command", answer="deny"), "The user denied this command. Do not retry it; ask"),
        (Row("fetch", answer="deny"), "The user denied fetching from h. Do not retry it; ask"),
        (Row("tool", answer="deny"), "The user denied this call. Do not retry it; ask"),
        (
            Row("call", rule="ask", answer="deny"),
            "The user denied this read_file call. It was asked because the permission rule "
            "Read(notes.md). Do not retry it; ask",
        ),
        (
            Row("command", rule="ask", answer=None),
            "Refused: nobody could approve it. It was asked because the permission rule "
            "Bash(make).",
        ),
        (Row("command", rule="deny"), "Denied by the permission rule Bash(make). Do not retry"),
        (
            Row("fetch", hook="ask", answer="deny"),
            "The user denied fetching from h. It was asked because a PreToolUse hook said so.",
        ),
    ],
)
async def test_one_wording_of_each_refusal(tmp_path: Path, row: Row, words: str) -> None:
    assert (await _refusal(tmp_path, row)).startswith(words)


async def test_allow_for_this_task_given_in_a_subagent_holds_for_the_task(tmp_path: Path) -> None:
    """The grant is the task's: a subagent's "allow for this task" lets its own next command
    and the parent's run unasked. (The model answers in turn: the subagent runs inside the
    parent's step.)"""
    import asyncio

    from agentls.agent.subagents import delegate
    from doubles import Approver, ScriptedModel, call, make_agent, say

    model = ScriptedModel(
        call("agent", description="build", prompt="build it", subagent_type="general-purpose"),
        call("bash", command="touch one"),
        call("bash", command="touch two"),
        say("built"),
        call("bash", command="touch parent"),
        say("ok"),
    )
    agent, _ = make_agent(tmp_path, model, approve_commands="ask")
    delegate(agent)
    agent.tools.approver = approver = Approver("allow_task")
    await asyncio.wait_for(agent.run("fix it"), 30)
    assert approver.asked == ["touch one"]
    assert all((tmp_path / name).exists() for name in ("one", "two", "parent"))


class _HooksSaying:
    """PreToolUse hooks that answer each call in turn with the next of `verdicts`."""

    def __init__(self, *verdicts: str | None) -> None:
        self.verdicts = list(verdicts)

    async def before_tool(self, tool: str, arguments: Any) -> tuple[str | None, str | None]:
        return self.verdicts.pop(0), None

    async def after_tool(self, tool: str, arguments: Any, result: str, is_error: bool) -> str:
        return ""


async def test_a_hooks_verdict_holds_for_its_own_call_only(tmp_path: Path) -> None:
    """Handed on by value: the next call, which no hook allowed, is asked."""
    from agentls.tools import run_tool
    from doubles import Approver, tool_context

    context = tool_context(tmp_path, Approver("deny"), approve_commands="ask")
    context.hooks = _HooksSaying("allow", None)  # type: ignore[assignment]
    ran, error = await run_tool(context, "bash", {"command": "touch allowed"})
    assert not error and ran.startswith("exit code 0") and (tmp_path / "allowed").exists()
    told, error = await run_tool(context, "bash", {"command": "touch asked"})
    assert error and told.startswith("The user denied this command.")
    assert context.approver.asked == ["touch asked"]  # type: ignore[attr-defined]
    assert context.hooked is None and not (tmp_path / "asked").exists()
