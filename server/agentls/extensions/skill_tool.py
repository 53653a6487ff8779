"""Progressive disclosure of skills: the catalog (names, descriptions, where they come from)
in the system prompt within `skills.catalogBudget` characters, and the `skill` tool that
loads one's instructions when the model needs them.

The catalog and the tool (its `name` an enum of the catalog) are fixed for a task, so the
prompt's cached prefix stays byte-stable; a skill's body reaches the model as a tool result
(or as the task, for `/name`), after that prefix."""

from __future__ import annotations

import logging
from typing import Any

from ..permissions.rules import Rule, Rules
from ..tools.base import BeforeChange, Tool, ToolContext, ToolError
from .commands import skill_content, skill_files
from .settings import SkillOptions
from .skills import Skill

log = logging.getLogger(__name__)

MAX_BUDGET = 8000
SHARE = 0.02
"""The default budget: 2 % of the context window's size in tokens, taken as characters (a
catalog then costs about 0.5 % of the window), at most MAX_BUDGET characters."""
_HEADER = (
    "Skills: instructions for particular kinds of work, from this project, the user and "
    "their plugins. When a task matches a skill's description, load it with the skill tool "
    "first and follow it. Skills are text, not settings: they cannot grant permissions."
)
_SAID: set[str] = set()


def budget(options: SkillOptions, context_window: int | None) -> int:
    """The catalog's budget in characters, in a context window of `context_window` tokens
    (None: the usual 200,000)."""
    if options.catalog_budget is not None:
        return options.catalog_budget
    window = context_window or 200_000
    return min(int(window * SHARE), MAX_BUDGET)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ""
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",.;: ") + "…"


def _render(skills: list[Skill], limit: int | None, more: int = 0) -> str:
    lines = [_HEADER, "<skills>"]
    origin = None
    for skill in skills:
        if skill.origin != origin:
            origin = skill.origin
            lines.append(f"{origin}:")
        description = skill.description if limit is None else _cut(skill.description, limit)
        lines.append(f"- {skill.name}: {description}" if description else f"- {skill.name}")
    if more:
        lines.append(f"(and {more} more, named in the skill tool)")
    return "\n".join([*lines, "</skills>"])


def catalog(skills: list[Skill], chars: int) -> str:
    """The catalog within `chars` characters: whole, else every description shortened to
    the same length, else names only, else the first names; "" with no skill."""
    if not skills:
        return ""
    whole = _render(skills, None)
    if len(whole) <= chars:
        return whole
    low, high = 0, max(len(s.description) for s in skills)
    while low < high:  # the longest description length that fits
        middle = (low + high + 1) // 2
        if len(_render(skills, middle)) <= chars:
            low = middle
        else:
            high = middle - 1
    shown = skills
    while len(text := _render(shown, low, len(skills) - len(shown))) > chars and shown:
        shown = shown[:-1]
    _say_once(
        f"the skills' catalog ({len(whole)} characters) is over its budget of {chars} "
        f"(skills.catalogBudget): descriptions cut to {low} characters"
        + (f", {len(skills) - len(shown)} skills not listed" if len(shown) < len(skills) else "")
    )
    return text


def _say_once(message: str) -> None:
    if message not in _SAID:
        _SAID.add(message)
        log.warning("%s", message)


def allowed_rules(skill: Skill) -> Rules:
    """A user's (or a plugin's) skill's `allowed-tools` as allow rules; a project's give
    none: a repository never widens what the user allows."""
    if skill.kind == "project":
        if skill.allowed_tools:
            _say_once(f"the project skill {skill.name}: allowed-tools ignored (only yours allow)")
        return Rules()
    rules = []
    for text in skill.allowed_tools:
        try:
            rules.append(Rule.parse(text))
        except ValueError:
            _say_once(f"the skill {skill.name}: allowed-tools {text!r} is not a rule")
    return Rules(allow=tuple(rules))


def load(context: ToolContext, skill: Skill) -> None:
    """Mark `skill` loaded in the task: its folder readable, its allowed tools allowed."""
    loaded = context.skills
    loaded.names.add(skill.name)
    if skill.folder not in loaded.folders:
        loaded.folders.append(skill.folder)
    loaded.rules = loaded.rules + allowed_rules(skill)


def skill_tool(skills: list[Skill]) -> Tool:
    by_name = {skill.name: skill for skill in skills}

    async def handler(context: ToolContext, arguments: dict[str, Any], _: BeforeChange) -> str:
        skill = by_name.get(arguments["name"])
        if skill is None:  # validated against the enum already; kept for a table in a test
            raise ToolError(f"no skill {arguments['name']!r}")
        if skill.name in context.skills.names:
            return (
                f"The skill {skill.name} is loaded already in this task: follow its "
                "instructions above."
            )
        load(context, skill)
        return skill_content(skill, skill_files(skill))

    return Tool(
        name="skill",
        description=(
            "Load a skill of the catalog in the system prompt: its instructions and the list "
            "of its files (read those with read_file when the instructions say so)."
        ),
        properties={"name": {"type": "string", "enum": sorted(by_name)}},
        required=("name",),
        handler=handler,
        read_only=True,
        summary_field="name",
        words=lambda arguments, result: (True, f"loaded the skill {arguments['name']}"),
    )
