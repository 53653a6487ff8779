"""Showing untrusted text (a command, a diff, the model's words) to the user as it is.

A terminal obeys the control characters in what it prints: an ANSI escape can erase a line
or move the cursor, a carriage return can overwrite what came before, and Unicode's
direction overrides can reorder what is read. An approval prompt could then show one command
while another runs. Each such character is shown escaped instead (`\\x1b`, `\\r`, `\\u202e`).
"""

from __future__ import annotations

import re

_HIDDEN = re.compile(
    "\r(?!\n)"  # a lone CR; CRLF is a line end
    "|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]"  # C0 but tab and LF, DEL, C1
    "|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # direction marks and overrides
)
_HIDDEN_OR_BREAK = re.compile(_HIDDEN.pattern + "|[\r\n]")


_NAMED = {"\r": "\\r", "\n": "\\n"}


def _escaped(match: re.Match[str]) -> str:
    character = match.group()
    code = ord(character)
    if character in _NAMED:
        return _NAMED[character]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, lines: bool = True) -> str:
    """`text` with every control character escaped; line breaks and tabs are kept, unless
    `lines` is false (a one-line summary), when they are escaped too."""
    return (_HIDDEN if lines else _HIDDEN_OR_BREAK).sub(_escaped, text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _byte_or_code(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def valid_unicode(text: str) -> str:
    """`text` with lone surrogates shown escaped. A file name that is not UTF-8 comes from
    the OS with its bytes as surrogates (`\\udcff`), which no JSON encoder of an API request
    or an LSP message takes: shown as the bytes they stand for (`\\xff`), as `ls -b` does."""
    return _SURROGATE.sub(_byte_or_code, text)
