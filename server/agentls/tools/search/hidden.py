"""What a search leaves out: the paths of the deny and ask `Read(...)` rules, so grep and
list_files never show a file's name or content that read_file would refuse or ask for.

Two guards: the rules' globs given to ripgrep as exclusions (so it does not read those
files), and every name a search found checked against the rules themselves, links resolved,
as read_file would check it (so a difference between ripgrep's glob syntax and the rules'
can only hide more, never show more)."""

from __future__ import annotations

import re
from pathlib import Path

from ...permissions.rules import Rule, glob_holds, inside_path

_STARS = re.compile(r"(?:^|(?<=/))\*\*(?=/|$)|\*+|\?|[{}\\]")


def rg_exclusions(rules: tuple[Rule, ...]) -> list[str]:
    """`--glob !...` arguments for ripgrep that leave out at least what the rules hold."""
    arguments: list[str] = []
    for rule in rules:
        arguments += ["--glob", "!" + rg_glob(rule.spec or "**")]
    return arguments


def rg_glob(pattern: str) -> str:
    """The rules' glob in ripgrep's syntax. The rules' is fnmatch's from the root: `*` and
    `?` match `/` too, `**/x` is x at any depth, and nothing but `**/` is unanchored;
    ripgrep's is gitignore's: a `*` stays within a folder, and a glob without `/` is
    unanchored. So the glob is anchored at the root (`/`), a lone `*` becomes
    `{*,*/**/*}` (within a folder, or across some), a `?` `{?,/}`."""
    glob = pattern.removeprefix("./").removeprefix("/")
    anywhere = glob.startswith("**/")
    if anywhere:
        glob = glob[3:]
    translated = _STARS.sub(_translate, glob)
    return ("**/" if anywhere else "/") + translated


def _translate(match: re.Match[str]) -> str:
    text = match.group()
    if text == "**" and _whole_part(match):
        return "**"
    if text.startswith("*"):
        return "{*,*/**/*}"
    if text == "?":
        return "{?,/}"
    return "\\" + text  # a brace or backslash is literal in the rules' globs


def _whole_part(match: re.Match[str]) -> bool:
    text, start, end = match.string, match.start(), match.end()
    return (start == 0 or text[start - 1] == "/") and (end == len(text) or text[end] == "/")


class Hidden:
    """The rules a search leaves out, and the check of each name it found."""

    def __init__(self, root: Path, rules: tuple[Rule, ...]) -> None:
        self.root = root
        self.rules = rules

    def hides(self, name: str) -> bool:
        """Whether a found path (from the root) is one a rule holds; one that cannot be
        resolved is hidden."""
        if not self.rules:
            return False
        try:
            relative = inside_path(name, self.root)
        except (OSError, ValueError):
            return True
        return any(glob_holds(rule.spec or "**", relative) for rule in self.rules)

    def kept(self, names: list[str]) -> list[str]:
        return [name for name in names if not self.hides(name)]
