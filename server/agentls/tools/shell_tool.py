"""bash: a command in the workspace root, approved by the user unless allowed."""

from __future__ import annotations

from typing import Any, Literal

from ..interfaces import Command, CommandCancelled, ShellRefused
from .base import BeforeChange, Tool, ToolContext, ToolError


async def _approval(context: ToolContext, command: str) -> Literal["auto", "user"]:
    """ "auto" for a command that runs without asking, "user" for one the user allowed when
    shown it; raises ToolError for one denied, or that nobody could approve."""
    settings = context.settings
    if not context.asks("bash", {"command": command}):
        return "auto"
    decided = context.verdict("bash", {"command": command})
    # Why it was asked, when a rule did it: the model learns what would pass unasked.
    why = f" It was asked because {decided.why}." if decided and decided.verdict == "ask" else ""
    unsandboxed = settings.approved_commands_unsandboxed and context.shell.sandboxed
    try:
        decision = await context.approver.approve(command, unsandboxed)
    except ToolError as error:  # nobody could answer (`-p`, an editor that cannot ask)
        raise ToolError(f"{error}{why}") from None
    if decision == "allow_task":
        context.commands_allowed_for_task = True
    if decision == "deny":
        raise ToolError(
            f"The user denied this command.{why} Do not retry it; ask or take another way."
        )
    return "user"


async def bash(context: ToolContext, arguments: dict[str, Any], before_change: BeforeChange) -> str:
    command = arguments["command"]
    if not command.strip():
        raise ToolError("command is empty")
    approval = await _approval(context, command)
    await before_change(None)  # a command may change any file
    settings = context.settings
    timeout = settings.bash_timeout
    # Only a command the user saw and allowed may leave the sandbox, and only if they said so.
    sandboxed = approval == "auto" or not settings.approved_commands_unsandboxed
    live = context.progress.output if context.progress else None
    try:
        # Room for the exit code line and the cut note, so the result fits outputLimit whole.
        limit = settings.output_limit - 200
        result = await context.shell.run(Command(command, timeout, limit, sandboxed, live))
    except ShellRefused as error:
        raise ToolError(str(error)) from None
    except CommandCancelled as cancel:
        printed = cancel.output.rstrip("\n") or "(no output)"
        raise CommandCancelled(f"{CANCELLED_WHILE_RUNNING}\n{printed}") from None
    output = result.output.rstrip("\n") or "(no output)"
    if result.timed_out:
        raise ToolError(f"Timed out after {timeout:g} s; the command was killed. Output:\n{output}")
    note = f"\n{result.sandbox_note}" if result.sandbox_note else ""
    return f"exit code {result.exit_code}{note}\n{output}"


CANCELLED_WHILE_RUNNING = "Cancelled by the user while it ran; its output until then:"


def _words(arguments: dict[str, Any], result: str) -> tuple[bool, str]:
    code = result.partition("\n")[0].removeprefix("exit code ")
    return code == "0", f"exit code {code}"


BASH = Tool(
    name="bash",
    description=(
        "Run a bash command in the workspace root (stdin closed; stdout and stderr "
        "together). The user may be asked to approve it. Long output is cut in the middle. "
        "It may run in a sandbox: only the workspace writable, no network, and the jobs it "
        "left in the background ended with it."
    ),
    properties={"command": {"type": "string", "description": "The command line."}},
    required=("command",),
    handler=bash,
    summary_field="command",
    gated=True,
    words=_words,
)
