"""LSP's Location and LocationLink, as a server or an editor answers them, read into
agentls's Places; and a Position's character, counted as LSP counts it. The LSP door reads
the editor's answers with the same functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pygls.uris import to_fs_path

from ..interfaces import Place


def path_of(uri: Any) -> Path | None:
    """The file a `file:` URI names; None for any other."""
    if not isinstance(uri, str) or not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def line_of(range_: Any) -> int | None:
    """The 1-based line a JSON Range starts on."""
    try:
        line = range_["start"]["line"]
    except (KeyError, TypeError):
        return None
    return line + 1 if isinstance(line, int) and not isinstance(line, bool) and line >= 0 else None


def place_of(location: Any, name: str = "") -> Place | None:
    """A Location, or a LocationLink, as a Place; None for one that is malformed."""
    if not isinstance(location, dict):
        return None
    path = path_of(location.get("uri", location.get("targetUri")))
    line = line_of(location.get("range", location.get("targetSelectionRange")))
    return Place(path, line, name) if path is not None and line is not None else None


def places_of(answer: Any) -> list[Place]:
    """`textDocument/definition`'s or `references`' result (a Location, a list of Locations
    or LocationLinks, or null) as Places, the malformed left out."""
    locations = answer if isinstance(answer, list) else [answer]
    return [place for place in map(place_of, locations) if place is not None]


def utf16_units(text: str) -> int:
    """`text`'s length in UTF-16 code units: LSP's default count of a Position's character."""
    return len(text.encode("utf-16-le")) // 2
