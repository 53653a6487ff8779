"""Deciding which shell commands may run without asking the user."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path

_SHELL_SYNTAX = set(";&|`$<>(){}\n\r\\")
"""Characters that could chain, substitute or redirect: a command holding any is always asked."""

_WRITING_OPTIONS = (
    # git diff/log/format-patch, curl, gcc, sort, ...: a file to write
    "--output",
    "--output-file",
    "--output-directory",
    "--out",
    # pytest: reports, logs and a temporary folder it empties first
    "--junitxml",
    "--junit-xml",
    "--resultlog",
    "--result-log",
    "--log-file",
    "--basetemp",
    "--cov-report",
    # find: deleting, running, writing
    "-delete",
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-fls",
    "--in-place",
)
"""Options with which a read-only command writes, deletes or runs something else."""

_OUTPUT = "-o"
"""`-o FILE` or `-oFILE` (curl, gcc, sort, ...); also asks for a harmless `grep -o`."""

_IN_PLACE = {"sed", "perl", "ruby"}
"""Programs whose `-i` (alone or among other short options) edits files in place."""


def is_allowed(command: str, prefixes: Iterable[str], root: Path) -> bool:
    """Whether `command` is a plain call of one of `prefixes` (compared word by word) that
    neither names a path outside `root` nor gives an option that writes or deletes.

    `git status` allows `git status --short` but not `git statusx`, `git status; rm -rf ~`,
    `git status && curl ...`, `git status | sh` or `git status $(...)`; `git diff` does not
    allow `git diff --output=../x`, nor `find` `find . -delete`.
    """
    if _SHELL_SYNTAX & set(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    in_place = bool(words) and Path(words[0]).name in _IN_PLACE
    if any(_writes(word, in_place) or _leaves(root, word) for word in words):
        return False
    for prefix in prefixes:
        try:
            wanted = shlex.split(prefix)
        except ValueError:
            continue
        if wanted and words[: len(wanted)] == wanted:
            return True
    return False


def _writes(word: str, in_place: bool) -> bool:
    if word.split("=", 1)[0] in _WRITING_OPTIONS or word.startswith(_OUTPUT):
        return True
    return in_place and word.startswith("-") and not word.startswith("--") and "i" in word


def _leaves(root: Path, word: str) -> bool:
    """Whether `word`, or the value of an `--option=value`, names a path outside `root`
    (absolute, `~`, `..`, or through a symlink)."""
    inside = root.resolve()
    for text in {word, word.split("=", 1)[-1]}:
        if text and not text.startswith("-"):
            try:
                path = (inside / os.path.expanduser(text)).resolve()
            except (OSError, ValueError):  # a NUL byte, a name too long: ask
                return True
            if not path.is_relative_to(inside):
                return True
    return False
