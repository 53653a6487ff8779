"""Subagent types: the two built in, and definitions in Claude Code's format.

A definition is a markdown file (`.claude/agents/reviewer.md`): YAML front matter with
`name`, `description` (what the model reads to choose it), `tools` (a comma list that only
narrows the task's tools), `model` and `maxTurns`; the body is the subagent's system prompt."""

from __future__ import annotations

from dataclasses import dataclass

from ..permissions.rules import ALIASES


@dataclass(frozen=True)
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
        "general-purpose",
        "every tool of this task; for multi-step work that would fill this conversation",
        _GENERAL,
    ),
    Definition(
        "Explore",
        "read-only; searches the code and reports what it found with paths and line numbers",
        _EXPLORE,
        read_only=True,
    ),
)
