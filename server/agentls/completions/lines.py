"""A document's lines as LSP numbers them."""

from __future__ import annotations

import re

_BREAK = re.compile("\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines without their breaks, split at LSP's three (CRLF, CR, LF): line `n` here is
    line `n` of an LSP position, and a text ending in a break has an empty last line."""
    return _BREAK.split(text)
