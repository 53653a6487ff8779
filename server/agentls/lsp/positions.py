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


class PositionFinder:
    """Positions of increasing offsets into one text."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text = text
        self.codec = codec
        self._offset = 0
        self._line = 0

    def _breaks(self, start: int, end: int) -> int:
        text = self.text
        crlf = text.count("\r\n", start, end)
        # Hunks begin and end at line boundaries, so no offset falls inside a CRLF.
        return text.count("\n", start, end) + text.count("\r", start, end) - crlf

    def position(self, offset: int) -> types.Position:
        if offset < self._offset:
            self._offset, self._line = 0, 0
        self._line += self._breaks(self._offset, offset)
        self._offset = offset
        text = self.text
        line_start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
        return types.Position(self._line, self.codec.client_num_units(text[line_start:offset]))


def text_edits(
    text: str, hunks: list[Hunk], codec: PositionCodec, annotation_ids: list[str] | None
) -> list[types.TextEdit | types.AnnotatedTextEdit]:
    """One TextEdit per hunk, annotated when the client reviews edits by annotation."""
    finder = PositionFinder(text, codec)
    edits: list[types.TextEdit | types.AnnotatedTextEdit] = []
    for index, hunk in enumerate(hunks):
        edit_range = types.Range(finder.position(hunk.start), finder.position(hunk.end))
        if annotation_ids is None:
            edits.append(types.TextEdit(range=edit_range, new_text=hunk.text))
        else:
            edits.append(
                types.AnnotatedTextEdit(
                    range=edit_range, new_text=hunk.text, annotation_id=annotation_ids[index]
                )
            )
    return edits
