"""The editor as the agent's workspace: documents read from the client, edits sent as
`workspace/applyEdit`, and the disk kept in step with what the user accepted."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path
from pygls.workspace import TextDocument

from .. import files
from ..edits import Hunk
from ..interfaces import Change, Landed
from ..paths import relative
from .positions import annotated, text_edits

SETTLE_SECONDS = 2.0
"""How long to wait after an accepted edit for the client's didChange and save to arrive."""
WRITE_THROUGH_AFTER = 0.2
"""How long a file the client has not opened may stay unwritten before the server writes it."""
_POLLS = (0.01, 0.02, 0.04, 0.08, 0.1)
"""Pauses between looks: a client that answered with its file saved is seen at once, and
one that never saves does not have a big file read 200 times."""


def hunk_label(hunk: Hunk, index: int, total: int) -> str:
    """What an editor shows for a hunk, in the words the model is told of it."""
    return f"hunk {index + 1} of {total}: {hunk.describe()}"


def uri_of(path: Path) -> str:
    try:
        return from_fs_path(str(path)) or path.as_uri()
    except UnicodeEncodeError:
        # A name that is not UTF-8 (its bytes held as surrogates): pathlib quotes the bytes.
        return path.as_uri()


class LspWorkspace:
    def __init__(self, server: LanguageServer, root: Path) -> None:
        self.server = server
        self.root = root

    def _open_document(self, path: Path) -> TextDocument | None:
        documents: dict[str, TextDocument] = self.server.workspace.text_documents
        return documents.get(unquote(uri_of(path)))

    async def read_text(self, path: Path) -> str:
        document = self._open_document(path)
        if document is not None:
            return document.source
        return files.read_text(self.root, path)

    def _capabilities(self) -> types.WorkspaceEditClientCapabilities:
        workspace = self.server.client_capabilities.workspace
        edit = workspace.workspace_edit if workspace else None
        return edit or types.WorkspaceEditClientCapabilities()

    def workspace_edit(self, change: Change, document: TextDocument | None) -> types.WorkspaceEdit:
        capabilities = self._capabilities()
        uri = uri_of(change.path)
        name = relative(self.root, change.path)
        codec = self.server.workspace.position_codec
        edits = text_edits(change.old_text or "", change.hunks, codec)
        if not capabilities.document_changes:
            # `changes` holds plain TextEdits: the LSP annotates edits in documentChanges only.
            return types.WorkspaceEdit(changes={uri: edits})
        annotations = None
        reviewed: list[types.TextEdit | types.AnnotatedTextEdit] = list(edits)
        if capabilities.change_annotation_support is not None:
            total = len(change.hunks)
            ids = [f"{change.tool}:{name}:{i + 1}" for i in range(total)]
            annotations = {
                ids[i]: types.ChangeAnnotation(
                    label=hunk_label(hunk, i, total),
                    needs_confirmation=True,
                    description=f"{change.tool}: {name}, proposed by the agent",
                )
                for i, hunk in enumerate(change.hunks)
            }
            reviewed = annotated(edits, ids)
        version = document.version if document is not None else None
        document_edit = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=reviewed,
        )
        operations: list[types.CreateFile | types.TextDocumentEdit] = [document_edit]
        if change.old_text is None:
            operations.insert(
                0,
                types.CreateFile(
                    uri=uri,
                    options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                ),
            )
        return types.WorkspaceEdit(document_changes=operations, change_annotations=annotations)

    async def propose(self, change: Change) -> Landed:
        document = self._open_document(change.path)
        name = relative(self.root, change.path)
        edit = self.workspace_edit(change, document)
        params = types.ApplyWorkspaceEditParams(edit=edit, label=f"{change.tool}: {name}")
        # Read now: a client that applies the edit sends didChange before it answers, and
        # pygls updates this same document object in place.
        version_before = document.version if document is not None else None
        request_id = f"agentls-edit-{uuid.uuid4()}"
        pending = self.server.protocol.send_request_async(
            types.WORKSPACE_APPLY_EDIT, params, msg_id=request_id
        )
        try:
            # Shielded: the client's late answer must still find a future to complete.
            answer = await asyncio.shield(pending)
        except asyncio.CancelledError:
            # The task was cancelled during the review: withdraw the proposal.
            self.server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
            raise
        if not answer.applied:
            return Landed(False, rejected_reason=answer.failure_reason or "")
        reviewed = edit.change_annotations is not None
        return await self._settle(change, document is not None, version_before, reviewed)

    async def _settle(
        self, change: Change, was_open: bool, version_before: int | None, reviewed: bool
    ) -> Landed:
        """What landed, once the client's didChange (and save, if it saves) have arrived.

        A client that has the file open owns its text: it is told to save, never overwritten.
        A file the client has not opened is written here, so the next shell command sees it,
        unless the client wrote it already, reviewed it hunk by hunk (only it knows which
        hunks the user kept), or had it open before the review.
        """
        old_text = change.old_text or ""
        started = time.monotonic()
        polls = iter(_POLLS)
        while True:
            waited = time.monotonic() - started
            document = self._open_document(change.path)
            if document is not None:
                if not was_open:
                    settled = document.source != old_text
                else:
                    settled = document.version != version_before
                # The disk is read only once the document changed.
                if settled or waited > SETTLE_SECONDS:
                    on_disk = _disk_text(self.root, change.path) == document.source
                    if on_disk or waited > SETTLE_SECONDS:
                        return Landed(True, document.source, on_disk=on_disk)
            else:
                disk = _disk_text(self.root, change.path)
                if disk is not None and disk != old_text:
                    return Landed(True, disk)
                if not was_open and not reviewed and waited > WRITE_THROUGH_AFTER:
                    try:
                        files.write_atomic(self.root, change.path, change.new_text)
                    except (OSError, ValueError) as error:
                        return Landed(False, rejected_reason=f"it could not be written: {error}")
                    return Landed(True, change.new_text)
                if waited > SETTLE_SECONDS:
                    return Landed(True, None, on_disk=False)
            await asyncio.sleep(next(polls, _POLLS[-1]))


def _disk_text(root: Path, path: Path) -> str | None:
    try:
        return files.read_text(root, path)
    except (OSError, files.NotText):
        return None
