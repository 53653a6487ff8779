"""The editor as the agent's workspace: documents read from the client, edits sent as
`workspace/applyEdit` in the forms the client said it supports, and the disk kept in step
with what the user accepted.

The client's answer is believed, never timed: `applied: true` means the client holds the
edit, whether or not its didChange has arrived yet (docs/protocol.md, "Clients").
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from ..disk import files
from ..disk.landing import land_on_disk
from ..disk.paths import relative
from ..edits import Hunk
from ..interfaces import Change, Landed
from .documents import LspDocument
from .positions import annotated, text_edits

NO_APPLY_EDIT_OPEN = (
    "this editor cannot apply edits (it did not advertise workspace/applyEdit) and has the "
    "file open; agentls never writes a file the editor has open"
)


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

    def open_text(self, path: Path) -> str | None:
        document = self._open_document(path)
        return document.source if document is not None else None

    async def delete(self, path: Path) -> bool:
        """Delete a file the editor has open: through the editor when it can (so it closes
        the document), else on disk."""
        capabilities = self._capabilities()
        if capabilities.document_changes and types.ResourceOperationKind.Delete in (
            capabilities.resource_operations or []
        ):
            operation = types.DeleteFile(
                uri=uri_of(path), options=types.DeleteFileOptions(ignore_if_not_exists=True)
            )
            params = types.ApplyWorkspaceEditParams(
                edit=types.WorkspaceEdit(document_changes=[operation]),
                label=f"undo: delete {relative(self.root, path)}",
            )
            answer = await self.server.workspace_apply_edit_async(params)
            return bool(answer.applied)
        files.remove(self.root, path)
        return True

    async def read_text(self, path: Path) -> str:
        document = self._open_document(path)
        if document is not None:
            return document.source
        return files.read_text(self.root, path)

    def open_documents(self) -> dict[Path, str]:
        documents = {}
        for document in self.server.workspace.text_documents.values():
            path = to_fs_path(document.uri)
            if document.uri.startswith("file:") and path:
                documents[Path(path)] = document.source
        return documents

    def _capabilities(self) -> types.WorkspaceEditClientCapabilities:
        workspace = self.server.client_capabilities.workspace
        edit = workspace.workspace_edit if workspace else None
        return edit or types.WorkspaceEditClientCapabilities()

    def can_delete(self) -> bool:
        """Whether the client applies a `DeleteFile` in an edit (`resourceOperations`)."""
        capabilities = self._capabilities()
        return bool(capabilities.document_changes) and types.ResourceOperationKind.Delete in (
            capabilities.resource_operations or []
        )

    def reviews_hunks(self) -> bool:
        """Whether the client shows change annotations (each hunk put to the user)."""
        return self._capabilities().change_annotation_support is not None

    def _can_apply_edits(self) -> bool:
        workspace = self.server.client_capabilities.workspace
        return bool(workspace and workspace.apply_edit)

    def _can_create_files(self) -> bool:
        capabilities = self._capabilities()
        return bool(capabilities.document_changes) and types.ResourceOperationKind.Create in (
            capabilities.resource_operations or []
        )

    def workspace_edit(self, change: Change, document: TextDocument | None) -> types.WorkspaceEdit:
        capabilities = self._capabilities()
        uri = uri_of(change.path)
        name = relative(self.root, change.path)
        codec = self.server.workspace.position_codec
        edits = text_edits(change.old_text or "", change.hunks, codec)
        if change.old_text is None:
            # The whole empty document, to the start of the line after it: a client that
            # holds lines (Vim, Neovim) replaces its one empty line instead of keeping it as
            # an extra blank line at the end; one that holds a string clamps to its end.
            edits[0].range.end = types.Position(1, 0)
        if not capabilities.document_changes:
            # `changes` holds plain TextEdits: the LSP annotates edits in documentChanges only.
            return types.WorkspaceEdit(changes={uri: edits})
        annotations = None
        reviewed: list[types.TextEdit | types.AnnotatedTextEdit] = list(edits)
        if capabilities.change_annotation_support is not None and change.reviewed:
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
        document_edit = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=uri, version=_client_version(document)
            ),
            edits=reviewed,
        )
        operations: list[types.CreateFile | types.TextDocumentEdit] = [document_edit]
        if change.old_text is None and self._can_create_files():
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
        if not self._can_apply_edits():
            return await self._write_without_editor(change, document)
        name = relative(self.root, change.path)
        edit = self.workspace_edit(change, document)
        params = types.ApplyWorkspaceEditParams(edit=edit, label=f"{change.tool}: {name}")
        # Read now: a client that applies the edit may send didChange before it answers, and
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
        except JsonRpcException as error:
            # eglot answers a declined edit with an error ("User cancelled server edit").
            return Landed(False, rejected_reason=error.message or "the editor refused it")
        if not answer.applied:
            return Landed(False, rejected_reason=answer.failure_reason or "")
        reviewed = edit.change_annotations is not None
        return self._what_landed(change, document is not None, version_before, reviewed)

    def _what_landed(
        self, change: Change, was_open: bool, version_before: int | None, reviewed: bool
    ) -> Landed:
        """What the client holds after answering `applied: true`, without waiting for it.

        A client that has the file open owns its text: it is told to save, never overwritten.
        A file the client has not opened is written here, so the next shell command sees it,
        unless the client wrote it already, reviewed it hunk by hunk (only it knows which
        hunks the user kept), or had it open before the review.
        """
        document = self._open_document(change.path)
        if document is not None:
            reported = (
                document.version != version_before
                if was_open
                else not _opened_before_the_edit(document.source, change)
            )
            if reported:  # the client's didChange came before its answer
                on_disk = _disk_text(self.root, change.path) == document.source
                return Landed(True, document.source, on_disk=on_disk)
            if reviewed:  # which hunks the user kept shows only in the didChange to come
                return Landed(True, None, on_disk=False)
            if isinstance(document, LspDocument):
                document.believe_applied(change.new_text)
            on_disk = _disk_text(self.root, change.path) == change.new_text
            return Landed(True, change.new_text, on_disk=on_disk)
        disk = _disk_text(self.root, change.path)
        if disk is not None and disk != (change.old_text or ""):
            return Landed(True, disk)
        if was_open or reviewed:
            return Landed(True, None, on_disk=False)
        return self._write(change)

    async def _write_without_editor(self, change: Change, document: TextDocument | None) -> Landed:
        """A client without workspace/applyEdit: a file it has open is refused, another is
        written here, a change to review once the user allowed it (the permission gate asks
        the `question`, then proposes it again, no longer to review)."""
        if document is not None:
            return Landed(False, rejected_reason=NO_APPLY_EDIT_OPEN)
        if change.reviewed:
            name = relative(self.root, change.path)
            verb = "create" if change.old_text is None else "change"
            summary = ", ".join(hunk.describe() for hunk in change.hunks)
            return Landed(False, question=f"{verb} {name} ({summary})")
        # The question may have waited minutes: a file changed meanwhile is not overwritten.
        return land_on_disk(self.root, change)

    def _write(self, change: Change) -> Landed:
        try:
            files.write_atomic(self.root, change.path, change.new_text)
        except (OSError, ValueError) as error:
            return Landed(False, rejected_reason=f"it could not be written: {error}")
        return Landed(True, change.new_text)


def _client_version(document: TextDocument | None) -> int | None:
    """The version an edit is made for; none while the client owes a didChange, since its
    version after applying our edits is its own to count."""
    if document is None:
        return None
    if isinstance(document, LspDocument) and document.reported is not None:
        return None
    return document.version


def _opened_before_the_edit(opened: str, change: Change) -> bool:
    """Whether a document the client opened during the review holds the file as it was
    before the edit, so that the edit's didChange is still to come.

    A client that holds lines reports an empty file as one empty line: Neovim 0.7 opens the
    buffer it creates for a new file with the text "\n" (its 'eol'), answers `applied:
    true`, and only then sends the edit as a didChange against that text.
    """
    if opened == change.new_text:
        return False
    old = change.old_text or ""
    return opened == old or (not old and opened in ("\n", "\r\n"))


def _disk_text(root: Path, path: Path) -> str | None:
    try:
        return files.read_text(root, path)
    except (OSError, files.NotText):
        return None
