"""An independent oracle for LSP positions: how a client maps them into its text.

Written from the specification, not with pygls, so it can catch the server's mistakes:
lines break at CRLF, CR and LF only; characters are counted in the negotiated encoding.
"""

from __future__ import annotations

import re
from typing import Any

_BREAK = re.compile(r"\r\n|\r|\n")


def units(character: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(character.encode("utf-8"))
    if encoding == "utf-16":
        return 2 if ord(character) > 0xFFFF else 1
    return 1


def line_span(text: str, line: int) -> tuple[int, int]:
    """Where line `line` starts and where its text ends (before its break); past the last
    line, both are the end of the text."""
    starts = [0] + [match.end() for match in _BREAK.finditer(text)]
    if line >= len(starts):
        return len(text), len(text)
    found = _BREAK.search(text, starts[line])
    return starts[line], found.start() if found else len(text)


def offset(text: str, line: int, character: int, encoding: str) -> int:
    start, end = line_span(text, line)
    counted = 0
    index = start
    while index < end and counted < character:
        counted += units(text[index], encoding)
        index += 1
    assert counted == character or index == end, "a position inside a character"
    return index


def apply_text_edits(text: str, edits: list[Any], encoding: str) -> str:
    """Apply LSP TextEdits (all against the original text) as a client does."""
    spans = [
        (
            offset(text, e.range.start.line, e.range.start.character, encoding),
            offset(text, e.range.end.line, e.range.end.character, encoding),
            e.new_text,
        )
        for e in edits
    ]
    for start, end, new_text in sorted(spans, key=lambda span: span[:2], reverse=True):
        text = text[:start] + new_text + text[end:]
    return text
