"""Agent Skills (agentskills.io): folders with a `SKILL.md` (YAML front matter, then the
instructions), found where the other agents look for them, parsed leniently.

Where: the workspace's `.agents/skills/` and `.claude/skills/`, in the workspace folder and
each folder above it up to its git root (the nearest wins), then the user's
`~/.agents/skills/`, `~/.claude/skills/` and agentls's own `<config>/skills/`, then the
plugins' (`plugins.py`). A project skill overrides a user skill of the same name.

A repository is assumed hostile: its folders are walked without following a symlink, at
most `MAX_DEPTH` levels and `MAX_FOLDERS` folders, and its skills wait for the user's
approval (`for_task.py`, the Trust of `.mcp.json`) before the model or the `/` list sees
them. Nothing here runs anything."""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..config.environment import config_dir
from ..disk import files
from .front_matter import front_matter, scan

log = logging.getLogger(__name__)

MAX_DEPTH = 6
MAX_FOLDERS = 2000
SKILL_FILE = "SKILL.md"
BODY_LIMIT = 256 * 1024
"""Bytes of a SKILL.md read: a skill is instructions, not a data set."""
PROJECT_FOLDERS = (Path(".agents") / "skills", Path(".claude") / "skills")
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")

Kind = Literal["project", "user", "plugin"]


@dataclass(frozen=True, kw_only=True)
class Skill:
    name: str
    """As the model and the `/` list know it: a plugin's is `plugin:name`."""
    description: str
    folder: Path
    kind: Kind
    origin: str
    """Where it was found, as the user reads it: `.agents/skills`, `~/.claude/skills`,
    `plugin demo`."""
    body: str
    digest: str
    """SHA-256 of the SKILL.md bytes: what an approval pins."""
    allowed_tools: tuple[str, ...] = ()
    model_invocable: bool = True
    """False for `disable-model-invocation: true`: on the `/` list, not in the catalog."""
    argument_hint: str = ""


@dataclass(frozen=True)
class Skipped:
    path: Path
    why: str


@dataclass
class Found:
    """What a search found: the skills by name (overrides applied), what lost to an
    override, and what was skipped and why."""

    skills: dict[str, Skill] = field(default_factory=dict)
    shadowed: list[Skill] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def add(self, skill: Skill) -> None:
        """First come, first kept: the sources are searched most specific first."""
        if skill.name in self.skills:
            self.shadowed.append(skill)
        else:
            self.skills[skill.name] = skill


_SAID: set[tuple[str, str]] = set()
"""Problems already logged: each said once per process, not at every task."""


def _say_once(path: Path, why: str) -> None:
    if (str(path), why) not in _SAID:
        _SAID.add((str(path), why))
        log.warning("skill %s: %s", path, why)


def tool_list(value: Any) -> tuple[str, ...]:
    """`allowed-tools` as written: a YAML list, or one string of names separated by commas
    or spaces (spaces inside `Bash(git status:*)` kept)."""
    if isinstance(value, list):
        return tuple(str(item).strip() for item in value if str(item).strip())
    if not isinstance(value, str):
        return ()
    found, depth, word = [], 0, ""
    for char in value:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and (char == "," or char.isspace()):
            found.append(word)
            word = ""
        else:
            word += char
    return tuple(w.strip() for w in [*found, word] if w.strip())


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if isinstance(value, (str, int, float)) else ""


def read_skill(folder: Path, kind: Kind, origin: str, base: Path, prefix: str = "") -> Skill:
    """The skill in `folder` (under `base`, reached without a symlink for a project's);
    raises ValueError saying why it is skipped."""
    path = folder / SKILL_FILE
    try:
        text, size = files.read_head(base, path, BODY_LIMIT, follow=kind != "project")
    except (OSError, files.NotText) as error:
        raise ValueError(f"{SKILL_FILE} cannot be read: {error}") from None
    fields, body = front_matter(text)
    description = _text(fields.get("description"))
    if not description:
        raise ValueError("no description")
    name = _text(fields.get("name")) or folder.name
    if name != folder.name:
        _say_once(path, f"its name {name!r} is not its folder's ({folder.name!r})")
    if not _NAME.fullmatch(name) or len(name) > 64:
        _say_once(path, f"its name {name!r} is not 1-64 of a-z, 0-9 and single hyphens")
    if not re.fullmatch(r"[\w.:-]{1,64}", name):
        raise ValueError(f"its name {name!r} cannot be a command")
    flag = fields.get("disable-model-invocation")
    return Skill(
        name=prefix + name,
        description=description,
        folder=folder,
        kind=kind,
        origin=origin,
        body=body,
        digest=hashlib.sha256(text.encode()).hexdigest()
        + (f"+{size}" if size > BODY_LIMIT else ""),
        allowed_tools=tool_list(fields.get("allowed-tools")),
        model_invocable=not (flag is True or str(flag).lower() == "true"),
        argument_hint=_text(fields.get("argument-hint")),
    )


def skill_folders(base: Path, follow: bool) -> Iterator[Path]:
    """The folders under `base` that hold a SKILL.md, breadth first, within MAX_DEPTH levels
    and MAX_FOLDERS folders; a skill's own subfolders are not searched. Links are followed
    only in the user's own folders (`follow`), never in a repository's."""
    queue, seen, looked = [(base, 0)], set(), 0
    while queue:
        folder, depth = queue.pop(0)
        looked += 1
        if looked > MAX_FOLDERS:
            _say_once(base, f"more than {MAX_FOLDERS} folders: the rest is not searched")
            return
        try:
            real = folder.resolve() if follow else folder
            if real in seen:  # a link loop among the user's folders
                continue
            seen.add(real)
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            continue
        if folder != base and any(e.name == SKILL_FILE for e in listed):
            yield folder
            continue
        if depth >= MAX_DEPTH:
            continue
        for entry in listed:
            if not entry.name.startswith(".") and _is_folder(entry, follow):
                queue.append((Path(entry.path), depth + 1))


def _is_folder(entry: os.DirEntry[str], follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def git_top(root: Path) -> Path:
    """The nearest folder at or above `root` that holds `.git`; `root` when none does."""
    for folder in (root, *root.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return root


def project_bases(root: Path) -> list[tuple[Path, Path, str]]:
    """The project's skill folders, nearest first: (folder, the folder it is reached from
    without a link, its label)."""
    root = root.absolute()
    top = git_top(root)
    folders = [root, *(p for p in root.parents if p.is_relative_to(top))]
    return [
        (folder / name, folder, _label(root, folder / name))
        for folder in folders
        for name in PROJECT_FOLDERS
    ]


def _label(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def user_bases() -> list[tuple[Path, str]]:
    home = Path.home()
    return [
        (home / ".agents" / "skills", "~/.agents/skills"),
        (home / ".claude" / "skills", "~/.claude/skills"),
        (config_dir() / "skills", str(config_dir() / "skills")),
    ]


def _linked_out(start: Path, base: Path) -> bool:
    """Whether a link stands between `start` and `base` (a repository pointing its skills
    folder anywhere else)."""
    try:
        return base.resolve() != start.resolve() / base.relative_to(start)
    except (OSError, RuntimeError):
        return True


def search(
    found: Found, base: Path, kind: Kind, origin: str, start: Path, prefix: str = ""
) -> None:
    """Add the skills under `base` to `found` (what is skipped, with why)."""
    if not base.is_dir() or (kind == "project" and _linked_out(start, base)):
        return
    for folder in skill_folders(base, follow=kind != "project"):
        try:
            found.add(
                read_skill(folder, kind, origin, start if kind == "project" else folder, prefix)
            )
        except ValueError as error:
            found.skipped.append(Skipped(folder / SKILL_FILE, str(error)))
            _say_once(folder / SKILL_FILE, f"skipped: {error}")


def project_skills(root: Path) -> Found:
    found = Found()
    with scan():
        for base, start, label in project_bases(root):
            search(found, base, "project", label, start)
    return found


def user_skills() -> Found:
    found = Found()
    for base, label in user_bases():
        search(found, base, "user", label, base)
    return found
