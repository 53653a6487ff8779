"""MCP prompts as commands: `/mcp__<server>__<prompt> ARGUMENTS` is a task whose text the
server writes (`prompts/get`). The doors list them (`commands`) and a task that starts with
one is expanded before the model sees it (`expand`), in every door alike.

Arguments: `name=value` words by name, other words in the prompt's order; the last argument
takes the rest of the line. The command list is shaped for the skills' list of commands: a
name, a description, the arguments' names."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from .mcp_servers import Server, tool_name

PREFIX = "/mcp__"


@dataclass(frozen=True)
class Command:
    name: str
    """Without the slash: `mcp__server__prompt`."""
    description: str
    arguments: tuple[str, ...]
    required: tuple[str, ...]
    server: Server
    prompt: str

    @property
    def hint(self) -> str:
        return " ".join(a if a in self.required else f"[{a}]" for a in self.arguments)


def commands(servers: list[Server]) -> list[Command]:
    """The prompts of the ready servers, as commands."""
    made = []
    for server in servers:
        if server.state != "ready":
            continue
        for prompt in server.prompts:
            arguments = prompt.arguments or []
            made.append(
                Command(
                    name=tool_name(server.spec.name, prompt.name),
                    description=prompt.description or prompt.title or prompt.name,
                    arguments=tuple(a.name for a in arguments),
                    required=tuple(a.name for a in arguments if a.required),
                    server=server,
                    prompt=prompt.name,
                )
            )
    return made


def _arguments(command: Command, text: str) -> dict[str, str]:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    named = {}
    loose = []
    for word in words:
        key, equal, value = word.partition("=")
        if equal and key in command.arguments:
            named[key] = value
        else:
            loose.append(word)
    order = [a for a in command.arguments if a not in named]
    for index, name in enumerate(order):
        if index >= len(loose):
            break
        named[name] = " ".join(loose[index:]) if index == len(order) - 1 else loose[index]
    absent = [a for a in command.required if not named.get(a)]
    if absent:
        raise ValueError(
            f"/{command.name} needs {', '.join(absent)}: /{command.name} {command.hint}"
        )
    return named


def prompt_text(result: Any) -> str:
    """The prompt's messages as one task text; an assistant's message is marked as such."""
    parts = []
    for message in result.messages:
        content = message.content
        text = getattr(content, "text", None)
        if text is None:
            resource = getattr(content, "resource", None)
            text = getattr(resource, "text", None) or f"[{getattr(content, 'type', 'content')}]"
        parts.append(text if message.role == "user" else f"(assistant) {text}")
    return "\n\n".join(parts)


async def expand(task: str, servers: list[Server], timeout: float) -> str:
    """`task` with a leading `/mcp__server__prompt ...` replaced by the prompt's text;
    raises ValueError (the user's words) for an unknown command or missing arguments."""
    if not task.startswith(PREFIX):
        return task
    head, _, rest = task.partition(" ")
    known = {command.name: command for command in commands(servers)}
    command = known.get(head[1:])
    if command is None:
        names = ", ".join(f"/{name}" for name in sorted(known)) or "none (no server offers prompts)"
        raise ValueError(f"no MCP prompt {head}; the prompts: {names}")
    result = await command.server.get_prompt(command.prompt, _arguments(command, rest), timeout)
    return prompt_text(result)
