"""Subagent types: the two built in, and definitions in Claude Code's format.

A definition is a markdown file (`.claude/agents/reviewer.md`): YAML front matter with
`name`, `description` (what the model reads to choose it), `tools` (a comma list that only
narrows the task's tools), `model` and `maxTurns`; the body is the subagent's system prompt.
A plugin's `agents/*.md` are the user's own, named `plugin:name` as its skills are. The
files are read as found by `config/definition_files.py`; their shape is this module's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..config.definition_files import MAX_DEFINITIONS
from ..disk import files
from ..permissions.rules import ALIASES
from .front_matter import front_matter, read_markdown

if TYPE_CHECKING:
    from .plugins import Plugin


@dataclass(frozen=True, kw_only=True)
class Definition:
    name: str
    description: str
    prompt: str
    """The subagent's system prompt (before the workspace's root and memory)."""
    tools: tuple[str, ...] | None = None
    """The only tools it may have (agentls's names or Claude Code's); None: the task's."""
    read_only: bool = False
    """Only the task's read-only tools (Explore)."""
    model: str | None = None
    """A model id or a provider profile name; None: the task's model."""
    max_turns: int | None = None
    source: str = "built-in"
    """Where it was defined: "built-in", or the file's path."""

    def allows(self, tool: str) -> bool:
        """Whether its `tools` list names `tool` (by agentls's name or an alias of it)."""
        if self.tools is None:
            return True
        return any(tool == name or tool in ALIASES.get(name, ()) for name in self.tools)


_GENERAL = """\
You are a subagent: the main agent handed you one task, and your final reply is all it will
see of your work. Do the task with your tools; look before you act, never invent paths or
file contents. Edits are reviewed by the user as diffs, and each tool result says what
landed. End with a concise report: what you found or changed, with paths and line numbers."""

_EXPLORE = """\
You are a read-only explorer: the main agent handed you a question, and your final reply is
all it will see. Find the answer with list_files, grep and read_file (and the editor's
tools if you have them); never guess. Reply with your findings, concisely: paths and line
numbers, the few lines of code that matter, no narration of your search."""

BUILT_IN: tuple[Definition, ...] = (
    Definition(
        name="general-purpose",
        description="every tool",
        prompt=_GENERAL,
    ),
    Definition(
        name="Explore",
        description="read-only; reports findings with paths",
        prompt=_EXPLORE,
        read_only=True,
    ),
)


def parse(text: str, source: str) -> Definition:
    """A definition from a file's text; raises ValueError saying what is wrong."""
    fields, body = front_matter(text)
    prompt = body.strip()
    return Definition(
        name=_text(fields, "name"),
        description=" ".join(_text(fields, "description").split()),
        prompt=prompt,
        tools=_tools(fields.get("tools")),
        model=_model(fields.get("model")),
        max_turns=_turns(fields.get("maxTurns")),
        source=source,
    )


def _text(fields: Mapping[str, Any], key: str) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty text")
    return value.strip()


def _tools(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("tools is a comma list of tool names")
    return tuple(n.strip() for n in names if n.strip())


def _model(value: Any) -> str | None:
    if value is None or value == "inherit":
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("model is a model id, a provider profile's name or inherit")
    return value.strip()


def _turns(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("maxTurns is a whole number, at least 1")
    return value


def plugin_definitions(plugins: Iterable[Plugin]) -> tuple[list[Definition], list[str]]:
    """The plugins' subagent definitions (`Plugin.agent_files()`), the user's own as the
    plugins are, each named `plugin:name`: a plugin never takes a built-in type's name or
    one of the user's. With what is wrong with those that are none."""
    definitions: list[Definition] = []
    problems: list[str] = []
    for plugin in plugins:
        texts: dict[str, str] = {}
        for path in plugin.agent_files()[:MAX_DEFINITIONS]:
            try:
                texts[str(path)] = read_markdown(plugin.folder, path, follow=True)
            except (OSError, files.NotText) as error:
                problems.append(f"the subagent definition {path} is ignored: {error}")
        found, wrong = parsed(texts)
        definitions += [replace(d, name=plugin.prefix + d.name) for d in found]
        problems += wrong
    return definitions, problems


def parsed(texts: Mapping[str, str]) -> tuple[list[Definition], list[str]]:
    """Each text's definition, and what is wrong with those that are none."""
    definitions, problems = [], []
    for source, text in texts.items():
        try:
            definitions.append(parse(text, source))
        except ValueError as error:
            problems.append(f"the subagent definition {source} is ignored: {error}")
    return definitions, problems


def offered(user: Iterable[Definition], project: Iterable[Definition]) -> dict[str, Definition]:
    """The types a task offers, by name: the built-in ones; the user's, the first of a name
    winning, which may replace a built-in one; then the project's approved ones, which never
    take a name already taken (a repository cannot redefine Explore or the user's own)."""
    found = {definition.name: definition for definition in BUILT_IN}
    users: set[str] = set()
    for definition in user:
        if definition.name not in users:
            users.add(definition.name)
            found[definition.name] = definition
    for definition in project:
        found.setdefault(definition.name, definition)
    return found
