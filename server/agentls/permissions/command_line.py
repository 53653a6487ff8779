"""A bash command line read as bash would read its words, to know what it runs.

Only what a permission rule needs: the words of each simple command, quotes and backslashes
removed (`'r''m'`, `\\rm` and `r\\m` are all `rm`), and whether anything in it is shell syntax
that a rule cannot see through: a chain, a pipe, a redirection, a subshell or group, a
substitution or expansion (`$`, backticks, braces), a comment, a reserved word or an open
quote. Such a line is not plain; a plain line is one simple command whose words are known
before it runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_RESERVED = frozenset(
    "! if then else elif fi case esac for select while until do done function [[ ]] coproc".split()  # noqa: SIM905
)
"""Words that start a compound command: what runs depends on more than the first word."""

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


@dataclass
class Word:
    text: str = ""
    globbed: bool = False
    """It holds an unquoted `*`, `?` or `[`: bash may replace it by file names."""


@dataclass
class CommandLine:
    commands: list[list[Word]] = field(default_factory=list)
    """Each simple command's words, in order; split at `;`, `&`, `|`, line breaks, brackets."""
    syntax: bool = False
    """Something in the line is more than words (see the module's doc)."""

    @property
    def plain(self) -> bool:
        return not self.syntax and len(self.commands) == 1


class _Reader:
    def __init__(self) -> None:
        self.line = CommandLine()
        self.words: list[Word] = []
        self.word: Word | None = None

    def char(self, text: str) -> None:
        if self.word is None:
            self.word = Word()
        self.word.text += text

    def end_word(self) -> None:
        if self.word is not None:
            self.words.append(self.word)
            self.word = None

    def end_command(self) -> None:
        self.end_word()
        if self.words:
            self.line.commands.append(self.words)
        self.words = []


def parse(command: str) -> CommandLine:
    """The line's simple commands and whether it is plain (see the module's doc)."""
    reader = _Reader()
    line = reader.line
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t":
            reader.end_word()
        elif c in ";&|\n\r()":
            line.syntax = True
            reader.end_command()
        elif c in "<>`${}":
            line.syntax = True  # a redirection, substitution, expansion or group
            if c in "<>":
                reader.end_word()
            else:
                reader.char(c)
        elif c == "#" and reader.word is None:
            line.syntax = True  # a comment: what follows is hidden from a reader of words
            reader.end_command()
            break
        elif c == "\\":
            if command.startswith("\n", i + 1):
                i += 1  # a line continuation joins the lines
            elif i + 1 < n:
                reader.char(command[i + 1])
                i += 1
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                line.syntax = True
                end = n
            reader.char(command[i + 1 : end])
            i = end
        elif c == '"':
            i = _double_quoted(command, i + 1, reader)
        else:
            reader.char(c)
            if c in "*?[":
                assert reader.word is not None
                reader.word.globbed = True
        i += 1
    reader.end_command()
    if any(words[0].text in _RESERVED for words in line.commands):
        line.syntax = True
    return line


def _double_quoted(command: str, i: int, reader: _Reader) -> int:
    """Reads up to the closing quote; returns its index (the end for an open quote)."""
    reader.char("")
    n = len(command)
    while i < n and command[i] != '"':
        c = command[i]
        if c == "\\" and i + 1 < n and command[i + 1] in '$`"\\\n':
            if command[i + 1] != "\n":
                reader.char(command[i + 1])
            i += 2
            continue
        if c in "$`":
            reader.line.syntax = True  # a substitution inside the quotes
        reader.char(c)
        i += 1
    if i >= n:
        reader.line.syntax = True
    return i


def is_assignment(word: str) -> bool:
    """`NAME=value`: a variable set for the command, not the command."""
    return _ASSIGNMENT.match(word) is not None
