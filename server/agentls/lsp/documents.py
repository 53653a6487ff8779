"""Open documents that split lines as LSP does, and take a keystroke without per-line
Python work.

pygls's TextDocument splits with `str.splitlines`, which also breaks at form feeds, vertical
tabs, U+2028 and other separators LSP does not count; an incremental change below such a
line would then be applied at the wrong place, and positions would be wrong. These
documents split at CRLF, CR and LF only.

pygls also applies each incremental change by splitting the whole text into lines and
joining them again: on a 10 MB file, a tenth of a second of Python per keystroke. These
documents find the change's two positions by counting line breaks in C and splice the text.

And a client's `applied: true` is believed before its didChange arrives (eglot sends it only
when Emacs is idle, vim-lsp after the next keystroke): the document holds the applied text at
once, and the client's late didChange, which describes the change from the text it had
reported, is applied to that text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from .positions import count_breaks

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_BREAK = re.compile(r"\r\n|\r|\n")
_CHUNK = 1 << 16


def lsp_lines(text: str) -> list[str]:
    """The lines of `text` with their endings, split at CRLF, CR and LF only."""
    return _LINE.findall(text)


def line_start(text: str, line: int, begin: int = 0) -> int:
    """Where the line `line` lines after the one starting at `begin` starts; len(text) past
    the end."""
    offset, remaining = begin, line
    # Whole chunks are skipped by counting their breaks in C; the last lines are walked.
    while remaining > 0 and offset < len(text):
        end = min(offset + _CHUNK, len(text))
        if text.startswith("\r\n", end - 1):
            end += 1  # a CRLF is one break: never split it
        breaks = count_breaks(text, offset, end)
        if breaks >= remaining:
            break
        remaining -= breaks
        offset = end
    while remaining > 0 and offset < len(text):
        found = _BREAK.search(text, offset)
        if found is None:
            return len(text)
        offset = found.end()
        remaining -= 1
    return offset if remaining == 0 else len(text)


class LspDocument(TextDocument):
    reported: str | None = None
    """The text the client last reported, while this document holds edits it said it applied
    and has not reported yet; None when the document is the client's own report."""

    def believe_applied(self, text: str) -> None:
        """The client answered `applied: true` to an edit giving `text`; its didChange may
        come much later."""
        if self.reported is None:
            self.reported = self.source
        self._source = text

    @property
    def lines(self) -> Sequence[str]:
        return tuple(lsp_lines(self.source))

    def _offset(self, text: str, line_offset: int, character: int) -> int:
        """The offset of a client column on the line starting at `line_offset`, clamped to
        the line's end as LSP says."""
        found = _BREAK.search(text, line_offset)
        line = text[line_offset : found.start() if found else len(text)]
        codec = self.position_codec
        if character >= codec.client_num_units(line):
            return line_offset + len(line)
        return (
            line_offset
            + codec.position_from_client_units([line], types.Position(0, character)).character
        )

    def offset_at_position(self, client_position: types.Position) -> int:
        # pygls's splits the whole text into lines, twice: 0.7 s on a 10 MB document.
        text = self.source
        line = line_start(text, client_position.line)
        return self._offset(text, line, client_position.character)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        text = self.source
        start, end = change.range.start, change.range.end
        start_line = line_start(text, start.line)
        end_line = line_start(text, end.line - start.line, start_line)
        start_offset = self._offset(text, start_line, start.character)
        end_offset = max(self._offset(text, end_line, end.character), start_offset)
        self._source = text[:start_offset] + change.text + text[end_offset:]


class LspDocuments(Workspace):
    """pygls's workspace, holding LspDocuments."""

    @classmethod
    def replacing(cls, workspace: Workspace) -> LspDocuments:
        return cls(
            workspace.root_uri,
            workspace._sync_kind,
            list(workspace.folders.values()),
            workspace.position_encoding,
        )

    def update_text_document(
        self,
        text_doc: types.VersionedTextDocumentIdentifier,
        change: types.TextDocumentContentChangeEvent,
    ) -> None:
        document = self._text_documents.get(unquote(text_doc.uri))
        if isinstance(document, LspDocument) and document.reported is not None:
            # The client's changes are relative to what it last reported.
            document._source, document.reported = document.reported, None
        super().update_text_document(text_doc, change)

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LspDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )
