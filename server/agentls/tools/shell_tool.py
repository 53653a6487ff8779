"""bash: a command in the workspace root, approved by the user unless allowed."""

from __future__ import annotations

from typing import Any

from ..interfaces import Command, CommandCancelled, ShellRefused
from ..permissions.gate import Request
from .base import BeforeChange, Tool, ToolContext, ToolError


async def bash(context: ToolContext, arguments: dict[str, Any], before_change: BeforeChange) -> str:
    command = arguments["command"]
    if not command.strip():
        raise ToolError("command is empty")
    asked = Request(source="command", tool="bash", arguments={"command": command}, shown=command)
    permit = await context.gate().ask(asked)
    await before_change(None)  # a command may change any file
    settings = context.settings
    timeout = settings.bash_timeout
    live = context.progress.output if context.progress else None
    try:
        # Room for the exit code line and the cut note, so the result fits outputLimit whole.
        limit = settings.output_limit - 200
        result = await context.shell.run(Command(command, timeout, limit, permit.sandboxed, live))
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
