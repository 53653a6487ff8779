"""Deciding which shell commands may run without asking the user."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

_SHELL_SYNTAX = set(";&|`$<>(){}\n\r\\")
"""Characters that could chain, substitute or redirect: a command holding any is always asked."""


def is_allowed(command: str, prefixes: Iterable[str]) -> bool:
    """Whether `command` is a plain call of one of `prefixes` (compared word by word).

    `git status` allows `git status --short` but not `git statusx`, `git status; rm -rf ~`,
    `git status && curl ...`, `git status | sh` or `git status $(...)`.
    """
    if _SHELL_SYNTAX & set(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for prefix in prefixes:
        try:
            wanted = shlex.split(prefix)
        except ValueError:
            continue
        if wanted and words[: len(wanted)] == wanted:
            return True
    return False
