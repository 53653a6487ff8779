"""Hooks in Claude Code's format: commands the user configured, run at eight events with a
JSON object on stdin.

`PreToolUse` may block a call (exit 2, or `hookSpecificOutput.permissionDecision: "deny"`)
or decide it (`allow`, `ask`); `PostToolUse` may add to the result (exit 2 or
`decision: "block"`: its reason goes to the model); `UserPromptSubmit` may block the task or
add context (stdout); `Stop` may make the model go on (exit 2 or `decision: "block"`, with the
reason); `SessionStart` may add context; `PreCompact` only runs; `SubagentStart` may add
context to a subagent's task, `SubagentStop` make it go on (as Stop does), both matched on
the subagent's type. Any other exit code is an error shown to the user, never a block."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..permissions.rules import ALIASES
from ..shell import launch
from ..shell.launch import Launch
from ..shell.process_groups import GROUPS
from .programs import Programs

log = logging.getLogger(__name__)

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "PreCompact",
    "SubagentStart",
    "SubagentStop",
)
_TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT = 60.0
OUTPUT_LIMIT = 10_000
"""Characters of a hook's output kept: a hook cannot flood the model or the user."""


@dataclass(frozen=True)
class Hook:
    event: str
    matcher: str
    command: str
    timeout: float = DEFAULT_TIMEOUT
    project: bool = False
    """The repository's (`.agentls/settings.json`): run in the sandbox, audited."""

    def matches(self, tool: str | None) -> bool:
        if tool is None or self.matcher in ("", "*"):
            return True
        names = [tool, *(alias for alias, ours in ALIASES.items() if tool in ours)]
        try:
            return any(re.fullmatch(self.matcher, name) for name in names)
        except re.error:
            return self.matcher == tool


def parse_hooks(value: Any, project: bool = False) -> tuple[Hook, ...]:
    """Hooks from `{"PreToolUse": [{"matcher": "bash|Edit", "hooks": [{"type": "command",
    "command": "...", "timeout": 60}]}], ...}` (the repository's when `project`); raises
    ValueError."""
    if not isinstance(value, Mapping):
        raise ValueError('expected {"PreToolUse": [{"matcher": ..., "hooks": [...]}], ...}')
    hooks: list[Hook] = []
    for event, groups in value.items():
        if event not in EVENTS:
            raise ValueError(f"unknown hook event {event!r}; the events are {', '.join(EVENTS)}")
        if not isinstance(groups, list):
            raise ValueError(f"hooks.{event} must be a list of matcher groups")
        for group in groups:
            matcher = group.get("matcher", "") if isinstance(group, Mapping) else None
            entries = group.get("hooks") if isinstance(group, Mapping) else None
            if not isinstance(matcher, str) or not isinstance(entries, list):
                raise ValueError(f'hooks.{event}: each group is {{"matcher": "...", "hooks": []}}')
            for entry in entries:
                hooks.append(_hook(event, matcher, entry, project))
    return tuple(hooks)


def _hook(event: str, matcher: str, entry: Any, project: bool) -> Hook:
    if not isinstance(entry, Mapping) or entry.get("type", "command") != "command":
        raise ValueError(f'hooks.{event}: each hook is {{"type": "command", "command": "..."}}')
    command, timeout = entry.get("command"), entry.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"hooks.{event}: a hook needs a command")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"hooks.{event}: timeout is seconds, more than 0")
    return Hook(event, matcher, command, float(timeout), project)


@dataclass
class Ran:
    """What one hook said: its exit code (None: it timed out or could not start), output."""

    code: int | None
    stdout: str
    stderr: str

    def answer(self) -> dict[str, Any]:
        """Its stdout as JSON when it is an object (exit 0 only), else {}."""
        if self.code != 0:
            return {}
        try:
            loaded = json.loads(self.stdout)
        except ValueError:
            return {}
        return loaded if isinstance(loaded, dict) else {}


@dataclass
class Outcome:
    """What the hooks of one event decided together."""

    block: str | None = None
    """The reason the model (or, for a prompt, the user) is given for a block."""
    decision: Literal["allow", "ask", "deny"] | None = None
    context: list[str] = field(default_factory=list)
    """Text the hooks add for the model (UserPromptSubmit, SessionStart stdout)."""


class Hooks:
    """The hooks of a task: the user's, and the project's the user trusted."""

    def __init__(
        self,
        hooks: tuple[Hook, ...],
        programs: Programs,
        session_id: Callable[[], str],
        notify: Callable[[str], None],
    ) -> None:
        self.hooks = hooks
        self.root = programs.root
        self.programs = programs
        self.session_id = session_id
        self.notify = notify
        """Shows the user a hook that failed (an exit code other than 0 and 2)."""
        self.stop_active = False

    async def fire(
        self, event: str, tool: str | None = None, matched: str | None = None, **fields: Any
    ) -> Outcome:
        """Run the hooks of `event` whose matcher takes `tool` (or `matched`, another name
        matched on: a subagent's type)."""
        chosen = [h for h in self.hooks if h.event == event and h.matches(tool or matched)]
        outcome = Outcome()
        if not chosen:
            return outcome
        payload = {
            "session_id": self.session_id(),
            "cwd": str(self.root),
            "hook_event_name": event,
            **({"tool_name": tool} if tool is not None else {}),
            **fields,
        }
        data = json.dumps(payload).encode()
        ran = await asyncio.gather(*(self._run(hook, data) for hook in chosen))
        for hook, result in zip(chosen, ran, strict=True):
            self._judge(hook, result, outcome)
        return outcome

    def _judge(self, hook: Hook, ran: Ran, outcome: Outcome) -> None:
        if ran.code == 2:
            outcome.block = ran.stderr.strip() or f"blocked by the hook `{hook.command}`"
            outcome.decision = "deny"
            return
        if ran.code != 0:
            what = "timed out" if ran.code is None else f"exited with {ran.code}"
            self.notify(f"{hook.event} hook `{hook.command}` {what}: {ran.stderr.strip()[-500:]}")
            return
        answer = ran.answer()
        specific = answer.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        decision = specific.get("permissionDecision")
        reason = specific.get("permissionDecisionReason") or answer.get("reason") or ""
        if decision in ("allow", "ask", "deny") and outcome.decision != "deny":
            # Several hooks: deny wins over ask over allow, as the rules do.
            if decision == "deny" or outcome.decision is None or decision == "ask":
                outcome.decision = decision
            if decision == "deny":
                outcome.block = str(reason) or f"denied by the hook `{hook.command}`"
        if answer.get("decision") == "block":
            outcome.block = str(reason) or f"blocked by the hook `{hook.command}`"
        added = specific.get("additionalContext")
        if isinstance(added, str) and added.strip():
            outcome.context.append(added.strip())
        elif (
            not answer and ran.stdout.strip() and hook.event in ("UserPromptSubmit", "SessionStart")
        ):
            outcome.context.append(ran.stdout.strip())

    async def _run(self, hook: Hook, data: bytes) -> Ran:
        argv = ["/bin/sh", "-c", hook.command]
        if not hook.project:
            with launch.private_folder() as folder:
                return await self._start(self.programs.users(argv, folder, {}), hook, data)
        try:
            confined = self.programs.projects(argv, {})
        except RuntimeError as error:
            return Ran(None, "", str(error))
        audit = self.programs.audit
        settings = audit.before()
        try:
            return await self._start(confined, hook, data)
        finally:
            # The sandbox is gone with the hook: what it planted is all there.
            for line in audit.after(settings):
                self.notify(f"the project's hook `{hook.command}` planted a git setting: {line}")

    async def _start(self, program: Launch, hook: Hook, data: bytes) -> Ran:
        streams = asyncio.subprocess.PIPE
        try:
            process = await launch.start(program, stdin=streams, stdout=streams, stderr=streams)
        except OSError as error:
            return Ran(None, "", str(error))
        GROUPS.add(process.pid)
        try:
            out, err = await asyncio.wait_for(process.communicate(data), hook.timeout)
        except asyncio.TimeoutError:
            await _end(process)
            return Ran(None, "", f"after {hook.timeout:g} s")
        except asyncio.CancelledError:
            await _end(process)
            raise
        GROUPS.forget_if_empty(process.pid)
        return Ran(process.returncode, _text(out), _text(err))

    # The events, as the loop and the tools layer call them (`interfaces.Hooks`).

    async def submitted(self, task: str, first: bool) -> tuple[str, str | None]:
        context: list[str] = []
        if first:
            context += (await self.fire("SessionStart", source="startup")).context
        outcome = await self.fire("UserPromptSubmit", prompt=task)
        if outcome.block is not None:
            return task, f"A UserPromptSubmit hook blocked this task: {outcome.block}"
        added = "\n\n".join(context + outcome.context)
        return (f"{task}\n\n<hook-context>\n{added}\n</hook-context>" if added else task), None

    async def before_tool(self, tool: str, arguments: Any) -> tuple[str | None, str | None]:
        outcome = await self.fire("PreToolUse", tool, tool_input=arguments)
        return outcome.decision, outcome.block

    async def after_tool(self, tool: str, arguments: Any, result: str, is_error: bool) -> str:
        outcome = await self.fire(
            "PostToolUse",
            tool,
            tool_input=arguments,
            tool_response={"content": result, "is_error": is_error},
        )
        return "" if outcome.block is None else f"A PostToolUse hook says: {outcome.block}"

    async def stopping(self) -> str | None:
        outcome = await self.fire("Stop", stop_hook_active=self.stop_active)
        self.stop_active = outcome.block is not None
        return None if outcome.block is None else f"(A Stop hook: go on. {outcome.block})"

    async def compacting(self) -> None:
        await self.fire("PreCompact", trigger="manual", custom_instructions="")

    async def subagent_started(self, agent_id: str, agent_type: str) -> str:
        outcome = await self.fire(
            "SubagentStart", matched=agent_type, agent_id=agent_id, agent_type=agent_type
        )
        return "\n\n".join(outcome.context)

    async def subagent_stopping(self, agent_id: str, agent_type: str, active: bool) -> str | None:
        outcome = await self.fire(
            "SubagentStop",
            matched=agent_type,
            agent_id=agent_id,
            agent_type=agent_type,
            stop_hook_active=active,
        )
        return None if outcome.block is None else f"(A SubagentStop hook: go on. {outcome.block})"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")[-OUTPUT_LIMIT:]


async def _end(process: asyncio.subprocess.Process) -> None:
    """The hook and whatever it started: a cancel or a timeout ends all of it."""
    launch.kill_group(process)
    await process.wait()
    GROUPS.forget(process.pid)
