"""Asking the user with `session/request_permission`: before a command, and before an edit
in a mode that reviews edits, whatever the client offers."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import acp
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate, ToolKind

from ..interfaces import Decision
from ..permissions.gate import always_for, fetch_question
from .progress import AcpProgress, step_in_flight

ALLOW_ONCE = PermissionOption(option_id="allow", name="Allow once", kind="allow_once")
ALLOW_ALWAYS = PermissionOption(
    option_id="allow_always", name="Allow always (this session)", kind="allow_always"
)
REJECT = PermissionOption(option_id="reject", name="Reject", kind="reject_once")


def _always_for(host: str) -> PermissionOption:
    """A fetch's "always": for its host, the rest of the session."""
    return ALLOW_ALWAYS.model_copy(update={"name": always_for(host)})


class PermissionClient(Protocol):
    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> Any: ...


class SessionMode(Protocol):
    """The session's command mode, which "allow always" switches to "always"."""

    def allow_always(self) -> None: ...


async def ask(
    client: PermissionClient,
    session_id: str,
    call: ToolCallUpdate,
    options: list[PermissionOption],
) -> str | None:
    """The option the user chose; None when they dismissed the question or the turn ended."""
    response = await client.request_permission(session_id, call, options)
    outcome = response.outcome
    return outcome.option_id if isinstance(outcome, AllowedOutcome) else None


def _call(progress: AcpProgress, title: str, kind: ToolKind, raw_input: Any) -> ToolCallUpdate:
    """The question as the step in flight, so the client shows it on that tool call."""
    return ToolCallUpdate(
        tool_call_id=step_in_flight(progress) or "agentls-approval",
        title=title,
        kind=kind,
        raw_input=raw_input,
    )


class AcpApprover:
    def __init__(
        self, client: PermissionClient, session_id: str, progress: AcpProgress, mode: SessionMode
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.progress = progress
        self.mode = mode
        self.asking = asyncio.Lock()
        """One question at a time: the read-only calls of a turn run together."""

    async def _ask(self, call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        async with self.asking:
            # The step's tool_call (and an edit's diff) go through the update queue, the
            # question straight to the client: without the flush a client hears of the
            # question first.
            await self.progress.updates.flush()
            return await ask(self.client, self.session_id, call, options)

    async def approve(self, command: str, unsandboxed: bool = False, host: str = "") -> Decision:
        if host:
            call = _call(self.progress, fetch_question(command), "fetch", {"url": command})
            choice = await self._ask(call, [ALLOW_ONCE, _always_for(host), REJECT])
            if choice == ALLOW_ALWAYS.option_id:
                return "allow_always"
            return "allow" if choice == ALLOW_ONCE.option_id else "deny"
        title = f"{command} (outside the sandbox)" if unsandboxed else command
        call = _call(self.progress, title, "execute", {"command": command})
        choice = await self._ask(call, [ALLOW_ONCE, ALLOW_ALWAYS, REJECT])
        if choice == ALLOW_ALWAYS.option_id:
            self.mode.allow_always()
            return "allow_task"
        return "allow" if choice == ALLOW_ONCE.option_id else "deny"

    async def approve_plan(self, plan: str) -> bool:
        call = _call(self.progress, "Carry out this plan", "switch_mode", {"plan": plan})
        call.content = [acp.tool_content(acp.text_block(plan))]
        return await self._ask(call, [ALLOW_ONCE, REJECT]) == "allow"

    async def approve_project(self, what: str) -> bool:
        call = _call(self.progress, f"The project asks to {what}", "other", {"project": what})
        return await self._ask(call, [ALLOW_ONCE, REJECT]) == "allow"

    async def approve_edit(self, name: str, diff: Any) -> bool:
        call = _call(self.progress, f"Edit {name}", "edit", {"path": name})
        call.content = [diff]
        return await self._ask(call, [ALLOW_ONCE, REJECT]) == "allow"
