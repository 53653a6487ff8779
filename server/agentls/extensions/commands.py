"""The `/` commands every door offers: each skill is `/name [arguments]`, and so is each
`.claude/commands/NAME.md` (the project's and `~/.claude/commands/`, Claude Code's custom
commands: `$ARGUMENTS` and `$1`…`$9` replaced). Other sources plug in through `SOURCES`
(the MCP servers' prompts, as `/mcp__server__prompt`).

What the repository brings (its skills and command files) counts only once the user approved
those exact files (`Trust`, as `.mcp.json`): until then it is neither in the catalog nor on
the `/` list. `available()` is the one place that decides what a task and a door see."""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..disk import files
from .front_matter import front_matter, read_markdown, scan
from .plugins import Plugin
from .skills import (
    Found,
    Kind,
    Skill,
    Skipped,
    git_top,
    project_skills,
    search,
    user_skills,
)
from .trust import Trust

COMMANDS_FOLDER = Path(".claude") / "commands"
_INVOKED = re.compile(r"(<editor>\n.*?\n</editor>\n\n)?/([\w.:-]+)(?:[ \t]+(.*))?\Z", re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class Command:
    name: str
    description: str
    kind: Kind
    origin: str
    """Where it comes from, in the user's words (`.claude/commands`, `plugin demo`)."""
    hint: str = ""
    body: str = ""
    digest: str = ""
    skill: Skill | None = None
    expander: Callable[[str], Awaitable[str]] | None = None
    """For a source whose text comes from elsewhere (an MCP prompt): the task for the
    arguments."""

    async def expand(self, arguments: str) -> str:
        """The task the model gets for `/name arguments`."""
        if self.expander is not None:
            return await self.expander(arguments)
        if self.skill is not None:
            return skill_task(self.skill, arguments)
        return substituted(self.body, arguments)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "hint": self.hint}


Source = Callable[[Path], Iterable[Command]]
SOURCES: list[Source] = []
"""More commands, given the workspace root (MCP prompts); each called by `available()`."""


def substituted(body: str, arguments: str) -> str:
    """`$ARGUMENTS` as typed, `$1`…`$9` the words (shell quoting honoured); with neither in
    the body, the arguments follow it."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    text = body.replace("$ARGUMENTS", arguments)
    text = re.sub(
        r"\$([1-9])", lambda m: words[int(m[1]) - 1] if int(m[1]) <= len(words) else "", text
    )
    if text == body and arguments:
        text = f"{body}\n\nARGUMENTS: {arguments}"
    return text


def skill_content(skill: Skill, listing: list[str]) -> str:
    """A skill's body as the model reads it, fenced so it is known as one, with its files
    (their names, not their text)."""
    body = skill.body.replace("</skill_content", "<\\/skill_content")
    shown = "\n".join(f"- {name}" for name in listing) or "(none)"
    return (
        f'<skill_content name="{skill.name}">\n{body}\n\n'
        f"Folder: {skill.folder}\nFiles (read them with read_file when the instructions "
        f"call for them):\n{shown}\n</skill_content>"
    )


def skill_task(skill: Skill, arguments: str) -> str:
    loaded = skill_content(skill, skill_files(skill))
    if "$ARGUMENTS" in skill.body or re.search(r"\$[1-9]", skill.body):
        return substituted(loaded, arguments)
    return loaded + (f"\n\nARGUMENTS: {arguments}" if arguments else "")


def skill_files(skill: Skill, limit: int = 200) -> list[str]:
    """The skill's files but SKILL.md, relative to its folder, without following a link."""
    listed: list[str] = []
    for path in sorted(skill.folder.rglob("*")):
        if len(listed) >= limit:
            listed.append("(more not listed)")
            break
        relative = path.relative_to(skill.folder)
        if relative.as_posix() == "SKILL.md" or any(p.startswith(".") for p in relative.parts):
            continue
        if path.is_file() and not path.is_symlink():
            listed.append(relative.as_posix())
    return listed


def invoked(task: str) -> tuple[str, str, str] | None:
    """`(editor context, name, arguments)` when the task is `/name arguments` (after the
    editor's context, if any); None otherwise."""
    match = _INVOKED.match(task.strip("\n") if not task.startswith("<editor>") else task)
    if match is None:
        return None
    return match[1] or "", match[2], (match[3] or "").strip()


def command_files(
    folder: Path, kind: Kind, origin: str, start: Path, prefix: str = ""
) -> tuple[list[Command], list[Skipped]]:
    """The `NAME.md` files of a commands folder (read without a link for a project's)."""
    if not folder.is_dir():
        return [], []
    commands, skipped = [], []
    for path in sorted(folder.glob("*.md"))[:500]:
        try:
            text = read_markdown(start, path, follow=kind != "project")
        except (OSError, files.NotText) as error:
            skipped.append(Skipped(path, f"cannot be read: {error}"))
            continue
        try:
            fields, body = front_matter(text) if text.startswith("---") else ({}, text)
        except ValueError as error:
            skipped.append(Skipped(path, str(error)))
            continue
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        description = str(fields.get("description") or first[:100] or path.stem)
        commands.append(
            Command(
                name=prefix + path.stem,
                description=" ".join(description.split()),
                kind=kind,
                origin=origin,
                hint=str(fields.get("argument-hint") or ""),
                body=body,
                digest=hashlib.sha256(text.encode()).hexdigest(),
            )
        )
    return commands, skipped


@dataclass
class Shared:
    """What is shared with the agent for one workspace: skills and commands, each source's,
    with what waits for approval and what was skipped."""

    skills: dict[str, Skill] = field(default_factory=dict)
    commands: dict[str, Command] = field(default_factory=dict)
    waiting: dict[str, str] = field(default_factory=dict)
    """The project's skills and command files not approved yet: `skill:NAME` or
    `command:NAME` to the digest an approval would pin."""
    found: Found = field(default_factory=Found)
    """Every skill found (approved or not), for `agentls skills`."""
    held: dict[str, Command] = field(default_factory=dict)
    """The `/name`s of those waiting, as they would run once approved (a door lists them,
    marked, and offers the approval): none that an approved command of the name hides."""

    def catalog(self) -> list[Skill]:
        """The skills the model is told of: approved, and invocable by the model."""
        return [s for s in sorted(self.skills.values(), key=_order) if s.model_invocable]

    def listing(self) -> list[Command]:
        return sorted(self.commands.values(), key=lambda c: c.name)


def _order(skill: Skill) -> tuple[int, str]:
    return ({"project": 0, "user": 1, "plugin": 2}[skill.kind], skill.name)


def project_commands(root: Path) -> tuple[list[Command], list[Skipped]]:
    with scan():
        return _project_commands(root)


def _project_commands(root: Path) -> tuple[list[Command], list[Skipped]]:
    root = root.absolute()
    top = git_top(root)
    commands: list[Command] = []
    skipped: list[Skipped] = []
    for folder in [root, *(p for p in root.parents if p.is_relative_to(top))]:
        label = (
            (folder / COMMANDS_FOLDER).relative_to(root).as_posix()
            if folder == root
            else str(folder / COMMANDS_FOLDER)
        )
        found, bad = command_files(folder / COMMANDS_FOLDER, "project", label, folder)
        commands += found
        skipped += bad
    return commands, skipped


def available(root: Path, plugins: Iterable[Plugin], trust: Trust | None = None) -> Shared:
    """Everything shared for `root`, the project's only where approved (every project file
    when `trust` is None: for listing what was found)."""
    shared = Shared()
    project = project_skills(root)
    found = shared.found
    found.skipped += project.skipped
    own_commands, bad = project_commands(root)
    found.skipped += bad
    for skill in project.skills.values():
        key = f"skill:{skill.name}"
        if trust is None or trust.approved("shared", key, skill.digest):
            shared.skills[skill.name] = skill
        else:
            shared.waiting[key] = skill.digest
            shared.held[skill.name] = _skill_command(skill)
    for command in own_commands:
        key = f"command:{command.name}"
        if trust is not None and not trust.approved("shared", key, command.digest):
            shared.waiting.setdefault(key, command.digest)
            shared.held.setdefault(command.name, command)
        elif command.name not in shared.commands:
            shared.commands[command.name] = command
    # Every skill found, the project's first: so a user's own of the same name is shadowed
    # (even by a project skill still waiting: approving it must not change what wins).
    for skill in project.skills.values():
        found.add(skill)
    user = user_skills()
    found.skipped += user.skipped
    for skill in user.skills.values():
        found.add(skill)
        # A project skill overrides it only once approved: a repository cannot hide it.
        shared.skills.setdefault(skill.name, skill)
    for command in command_files(
        Path.home() / COMMANDS_FOLDER, "user", "~/.claude/commands", Path.home()
    )[0]:
        shared.commands.setdefault(command.name, command)
    for plugin in plugins:
        _add_plugin(shared, plugin)
    for skill in shared.skills.values():
        shared.commands.setdefault(skill.name, _skill_command(skill))
    for source in SOURCES:
        for command in source(root):
            shared.commands.setdefault(command.name, command)
    shared.held = {n: c for n, c in shared.held.items() if n not in shared.commands}
    return shared


def _skill_command(skill: Skill) -> Command:
    return Command(
        name=skill.name,
        description=skill.description,
        kind=skill.kind,
        origin=skill.origin,
        hint=skill.argument_hint,
        skill=skill,
    )


def _add_plugin(shared: Shared, plugin: Plugin) -> None:
    origin = f"plugin {plugin.name}"
    found = Found()
    search(found, plugin.skills_folder(), "plugin", origin, plugin.folder, plugin.prefix)
    shared.found.skipped += found.skipped
    for skill in found.skills.values():
        shared.found.add(skill)
        shared.skills.setdefault(skill.name, skill)
    commands, skipped = command_files(
        plugin.commands_folder(), "plugin", origin, plugin.folder, plugin.prefix
    )
    shared.found.skipped += skipped
    for command in commands:
        shared.commands.setdefault(command.name, command)


def approve_waiting(trust: Trust, waiting: dict[str, str]) -> None:
    """Approve each of the project's skills and command files as they are now."""
    for key, digest in waiting.items():
        trust.approve("shared", key, digest)


def described(waiting: dict[str, str]) -> str:
    """The waiting skills and commands in the approval question's words."""
    skills = sorted(k.removeprefix("skill:") for k in waiting if k.startswith("skill:"))
    commands = sorted(k.removeprefix("command:") for k in waiting if k.startswith("command:"))
    parts = ([f"skills {', '.join(skills)}"] if skills else []) + (
        [f"commands {', '.join('/' + c for c in commands)}"] if commands else []
    )
    return "; ".join(parts)


def for_workspace(root: Path, plugin_folders: tuple[str, ...]) -> Shared:
    """What a door lists for `root`: the user's skills and commands, the plugins' (those of
    the `plugins` setting and the user's file), the project's once approved."""
    from .plugins import installed

    return available(root, installed(plugin_folders)[0], Trust(root))
