"""The one permission decision: what the rules say of a call, allow, ask or deny. Every tool
call meets it in the gate (`gate.py`); nothing else reads the rules to decide.

The order: deny rules, then ask rules, then allow rules, then the tool's own default.

A command rule decides only what it can see. `Bash(rm:*)` holds every program a command line
runs that can be read (`programs.py`): each of a chain, wrapped or not (`env rm`, `command
rm`, `/bin/rm`, `xargs rm`), the code of `sh -c` and `eval`, `find -exec`'s command. While
any deny or ask rule for bash exists, a command that is not plain (shell syntax, a shell or
an interpreter given code, an unknown option of a wrapper) is asked, and so is one that
names a guarded command among its words (`taskset 1 rm x`): no allow rule passes them, and
where nobody can answer they are refused.

Read rules hold `grep` and `list_files` too: a search in a path they name is denied or asked
as a read would be, and a wider search leaves out what they name (`unreadable`).

`web_fetch(domain:...)` rules hold the host of a fetch: web_fetch asks the gate for its
first address and for each redirect's (`tools/web_fetch.permit`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .command_line import Word
from .programs import Program, flattened, program, programs
from .rules import CHAIN, Rule, Rules, Verdict, split_words

NOT_PLAIN = (
    "it is not a plain command (a chain, pipe, redirection, substitution, a shell or an "
    "interpreter given code), which a bash permission rule cannot see through"
)
NAMES_GUARDED = "it names a program a bash permission rule guards, which it may run"
_SEARCHES = ("grep", "list_files")
_TOKEN = re.compile(r"[^\w./+-]+")
"""What separates the words inside an argument (`alias.x=!rm x`: `alias.x`, `rm`, `x`)."""
_ORDER: tuple[Verdict, ...] = ("deny", "ask", "allow")


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    rule: Rule | None = None
    """The rule that decided; None when the command's shape did (`reason`)."""
    reason: str = ""

    @property
    def why(self) -> str:
        """For the model and the user: `the permission rule Bash(rm:*)`, or the reason."""
        return f"the permission rule {self.rule}" if self.rule is not None else self.reason


def decide(rules: Rules, tool: str, arguments: Any, root: Path) -> Decision | None:
    """The rules' verdict on one call; None when none speaks and the tool's default holds."""
    command = arguments.get("command") if isinstance(arguments, Mapping) else None
    if tool == "bash" and isinstance(command, str):
        return _command(rules, command, root)
    for verdict in _ORDER:
        for rule in getattr(rules, verdict):
            held = rule.matches(tool, arguments, root, verdict)
            if held or _reading(rule, tool, arguments, root):
                return Decision(verdict, rule)
    return None


def _reading(rule: Rule, tool: str, arguments: Any, root: Path) -> bool:
    """A Read rule holds a search in a path it names, as it holds a read there."""
    if tool not in _SEARCHES or not rule.names("read_file") or not isinstance(arguments, Mapping):
        return False
    path = arguments.get("path", ".")
    return rule.matches("read_file", {"path": path}, root, "deny")


def unreadable(rules: Rules) -> tuple[Rule, ...]:
    """The deny and ask rules on reading a path: what a wider search must leave out."""
    return tuple(
        rule
        for rule in (*rules.deny, *rules.ask)
        if rule.spec is not None and rule.names("read_file")
    )


def _command(rules: Rules, command: str, root: Path) -> Decision | None:
    found = programs(command)
    # Also the chain as the words between operators read it, whatever the parse above made
    # of them (`echo $(rm x)`), each part's program unwrapped.
    every = flattened(found) + flattened(
        [program([Word(w) for w in split_words(part)]) for part in CHAIN.split(command)]
    )
    guards: dict[Verdict, list[Rule]] = {
        verdict: [rule for rule in getattr(rules, verdict) if rule.names("bash")]
        for verdict in ("deny", "ask")
    }
    for verdict, guarding in guards.items():
        for rule in guarding:
            if (
                rule.spec is None
                or any(rule.fits(each.words) for each in every)
                or rule.matches("bash", {"command": command}, root, verdict)
            ):
                return Decision(verdict, rule)
    guarded = guards["deny"] + guards["ask"]
    if guarded:
        plain = len(found) == 1 and found[0].plain
        if not plain:
            return Decision("ask", reason=NOT_PLAIN)
        if any(_names(rule, each) for rule in guarded for each in every):
            return Decision("ask", reason=NAMES_GUARDED)
    for rule in rules.allow:
        if rule.matches("bash", {"command": command}, root, "allow"):
            return Decision("allow", rule)
    return None


def _names(rule: Rule, found: Program) -> bool:
    """Whether the rule's command appears among the program's arguments, or inside one:
    `taskset 1 rm x` may run `rm` through a wrapper nobody listed, `git -c alias.x='!rm x'`
    through its configuration."""
    tokens = [token for word in found.words[1:] for token in _TOKEN.split(word) if token]
    return any(rule.fits(tokens[i:]) for i in range(len(tokens)))
