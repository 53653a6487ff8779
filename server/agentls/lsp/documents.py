"""Open documents that split lines as LSP does.

pygls's TextDocument splits with `str.splitlines`, which also breaks at form feeds, vertical
tabs, U+2028 and other separators LSP does not count; an incremental change below such a
line would then be applied at the wrong place, and positions would be wrong. These
documents split at CRLF, CR and LF only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lsp_lines(text: str) -> list[str]:
    """The lines of `text` with their endings, split at CRLF, CR and LF only."""
    return _LINE.findall(text)


class LspDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return tuple(lsp_lines(self.source))


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
