"""MCP prompts as commands: `/mcp__<server>__<prompt> ARGUMENTS` is a task whose text the
server writes (`prompts/get`). They are one more source of the command registry
(`commands.SOURCES`): a task that started a workspace's servers says so (`serving`), and from
then on every door lists their prompts with the skills and command files, and a task that
starts with one is expanded (`expand`, the registry command's expander), in every door alike.

Arguments: `name=value` words by name, other words in the prompt's order; the last argument
takes the rest of the line. The command list is shaped for the skills' list of commands: a
name, a description, the arguments' names."""

from __future__ import annotations

import shlex
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from . import commands as registry
from .mcp_servers import Server, tool_name

PREFIX = "/mcp__"


@dataclass(frozen=True, kw_only=True)
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


async def expand(command: Command, timeout: float, arguments: str) -> str:
    """The task for `/command arguments`: the prompt's text, as the server writes it; raises
    ValueError (the user's words) for missing arguments."""
    result = await command.server.get_prompt(
        command.prompt, _arguments(command, arguments), timeout
    )
    return prompt_text(result)


_SERVING: dict[Path, tuple[list[Server], float]] = {}
"""The servers the last task in each workspace started, with its call timeout."""
_LOCK = threading.Lock()  # the LSP server lists commands from a worker thread


def _key(root: Path) -> Path:
    return Path(root).resolve()


def serving(root: Path, servers: list[Server], timeout: float) -> None:
    """The servers a task in `root` started: their prompts are `root`'s commands."""
    with _LOCK:
        _SERVING[_key(root)] = (list(servers), timeout)


def unknown(name: str, root: Path) -> str:
    """What to say of `/name`, an `mcp__` name no ready server offers as a prompt."""
    with _LOCK:
        servers, _ = _SERVING.get(_key(root), ([], 0.0))
    known = ", ".join(f"/{c.name}" for c in sorted(commands(servers), key=lambda c: c.name))
    return f"no MCP prompt /{name}; the prompts: {known or 'none (no server offers prompts)'}"


def source(root: Path) -> Iterable[registry.Command]:
    """`commands.SOURCES`: the prompts of the servers serving `root`, as the registry's
    commands, each expanded by its server."""
    with _LOCK:
        servers, timeout = _SERVING.get(_key(root), ([], 0.0))
    for command in commands(servers):
        yield registry.Command(
            name=command.name,
            description=command.description,
            kind="project" if command.server.spec.source == "project" else "user",
            origin=f"MCP server {command.server.spec.name}",
            hint=command.hint,
            expander=partial(expand, command, timeout),
        )


registry.SOURCES.append(source)
