"""Hunks as LSP TextEdits, in the position encoding the client negotiated.

Positions are found by counting line breaks (LSP's three: CRLF, CR, LF) from one hunk to the
next, so a small edit to a huge file costs a scan of the text and nothing per line. Columns
are converted with pygls's codec; its offset-to-position helpers are not used, since they
fail on an empty document and at the end of a text without a final newline.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..edits import Hunk


def count_breaks(text: str, start: int, end: int) -> int:
    """LSP line breaks in text[start:end], which must not split a CRLF."""
    newlines = text.count("\n", start, end)
    returns = text.count("\r", start, end)
    # The slower two-character count only when there is a CR at all.
    return newlines + returns - (text.count("\r\n", start, end) if returns else 0)


class PositionFinder:
    """Positions of increasing offsets into one text."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text = text
        self.codec = codec
        self._offset = 0
        self._line = 0

    def position(self, offset: int) -> types.Position:
        if offset < self._offset:
            self._offset, self._line = 0, 0
        # Hunks begin and end at line boundaries, so no offset falls inside a CRLF.
        self._line += count_breaks(self.text, self._offset, offset)
        self._offset = offset
        text = self.text
        # A CR can only end the line if it comes after the last LF: search no further back.
        newline = text.rfind("\n", 0, offset)
        line_start = max(newline, text.rfind("\r", newline + 1, offset)) + 1
        return types.Position(self._line, self.codec.client_num_units(text[line_start:offset]))


def text_edits(text: str, hunks: list[Hunk], codec: PositionCodec) -> list[types.TextEdit]:
    """One TextEdit per hunk."""
    finder = PositionFinder(text, codec)
    return [
        types.TextEdit(
            range=types.Range(finder.position(hunk.start), finder.position(hunk.end)),
            new_text=hunk.text,
        )
        for hunk in hunks
    ]


def annotated(
    edits: list[types.TextEdit], annotation_ids: list[str]
) -> list[types.TextEdit | types.AnnotatedTextEdit]:
    """The edits, each with its change annotation, for a client that reviews by annotation."""
    return [
        types.AnnotatedTextEdit(range=edit.range, new_text=edit.new_text, annotation_id=id_)
        for edit, id_ in zip(edits, annotation_ids, strict=True)
    ]
