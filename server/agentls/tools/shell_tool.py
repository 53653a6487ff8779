"""bash: a command in the workspace root, approved by the user unless allowed."""

from __future__ import annotations

from typing import Any

from ..command_rules import is_allowed
from .base import Tool, ToolContext, ToolError


async def _approved(context: ToolContext, command: str) -> bool:
    settings = context.settings
    if (
        settings.approve_commands == "always"
        or context.commands_allowed_for_task
        or is_allowed(command, settings.allowed_commands)
    ):
        return True
    decision = await context.approver.approve(command)
    if decision == "allow_task":
        context.commands_allowed_for_task = True
    return decision != "deny"


async def bash(context: ToolContext, arguments: dict[str, Any]) -> str:
    command = arguments["command"]
    if not command.strip():
        raise ToolError("command is empty")
    if not await _approved(context, command):
        raise ToolError("The user denied this command. Do not retry it; ask or take another way.")
    timeout = context.settings.bash_timeout
    # Room for the exit code line and the cut note, so the result fits outputLimit whole.
    result = await context.shell.run(command, timeout, context.settings.output_limit - 200)
    output = result.output.rstrip("\n") or "(no output)"
    if result.timed_out:
        raise ToolError(f"Timed out after {timeout:g} s; the command was killed. Output:\n{output}")
    return f"exit code {result.exit_code}\n{output}"


BASH = Tool(
    name="bash",
    description=(
        "Run a bash command in the workspace root (stdin closed; stdout and stderr "
        "together). The user may be asked to approve it. Long output is cut in the middle."
    ),
    properties={"command": {"type": "string", "description": "The command line."}},
    required=("command",),
    handler=bash,
    summary_field="command",
)
