"""Copilot LS's `textDocument/copilotInlineEdit`: its params, and line edits as its result.

Copilot Language Server's next-edit request takes `{textDocument: {uri, version}, position}`
and answers `{edits: [{range, text, textDocument: {uri, version}, command?}]}`; ranges are in
the position encoding the client negotiated (UTF-16 unless it chose another). Pure functions:
the caller owns the document's text and the codec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pygls.workspace.position_codec import PositionCodec

from .text_window import lines_around
from .zeta import LineEdit

_MAX_URI = 8192
"""A uri longer than this is not a document the client opened: refused before use."""


class InlineEditParamsError(ValueError):
    """The request's params are not `{textDocument: {uri, version}, position}`."""


@dataclass(frozen=True)
class InlineEditParams:
    uri: str
    version: int
    line: int
    character: int
    """In the client's units (the negotiated encoding): the caller converts."""


def _field(params: dict[str, Any], name: str, kind: type, where: str) -> Any:
    value = params.get(name)
    # bool is an int to Python, never a line number or a version to LSP.
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InlineEditParamsError(f"{where}{name} must be {kind.__name__}, got {value!r:.80}")
    return value


def parse_params(params: object) -> InlineEditParams:
    """The request's params, checked; InlineEditParamsError says what is wrong."""
    if not isinstance(params, dict):
        raise InlineEditParamsError("params must be an object")
    document = _field(params, "textDocument", dict, "")
    position = _field(params, "position", dict, "")
    uri = _field(document, "uri", str, "textDocument.")
    version = _field(document, "version", int, "textDocument.")
    line = _field(position, "line", int, "position.")
    character = _field(position, "character", int, "position.")
    if not uri or len(uri) > _MAX_URI:
        raise InlineEditParamsError(f"textDocument.uri must be 1 to {_MAX_URI} characters")
    if line < 0 or character < 0:
        raise InlineEditParamsError("position.line and position.character must be >= 0")
    return InlineEditParams(uri, version, line, character)


def inline_edits(
    edits: Sequence[LineEdit], text: str, uri: str, version: int, codec: PositionCodec
) -> dict[str, list[dict[str, Any]]]:
    """The result for `edits` of the document `text` (uri, version); an edit naming lines
    the text no longer has is left out rather than applied somewhere else."""
    document = {"uri": uri, "version": version}
    line_break = _line_break(text)
    wanted = [edit for edit in edits if edit.line >= 0 and edit.span >= 1]
    if not wanted:
        return {"edits": []}
    # Only the lines the edits end on are needed: read those, not the whole document.
    top = min(edit.line for edit in wanted)
    bottom = max(edit.line + edit.span - 1 for edit in wanted)
    base, lines, total = lines_around(text, top, max(bottom - top, 1))
    result = []
    for edit in wanted:
        last = edit.line + edit.span - 1
        if last >= total:
            continue
        end = codec.client_num_units(lines[last - base])
        result.append(
            {
                "range": {
                    "start": {"line": edit.line, "character": 0},
                    "end": {"line": last, "character": end},
                },
                "text": edit.text.replace("\n", line_break),
                "textDocument": dict(document),
            }
        )
    return {"edits": result}


def _line_break(text: str) -> str:
    """The document's own line break, for the lines an edit inserts (LF unless it uses
    another): a CRLF file should not gain LF lines."""
    if "\r\n" in text:
        return "\r\n"
    return "\r" if "\r" in text and "\n" not in text else "\n"
