"""A scriptable editor on the client side of LSP, driving the real agentls server process.

It keeps documents like an editor does (open ones in memory, with versions and didChange),
applies `workspace/applyEdit` hunk by hunk as a review policy decides, saves what it
applied when told to, answers command approvals, and records every notification.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from in_process import InProcessServer, server_environment
from lsp_text import apply_text_edits
from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

Review = Callable[[str, list[Any]], list[bool]]
"""(uri, edits) -> which edits the user accepts."""


class EditorClient(LanguageClient):
    def __init__(self) -> None:
        super().__init__()
        self.documents: dict[str, tuple[str, int]] = {}
        self.review: Review = lambda uri, edits: [True] * len(edits)
        self.save = True
        self.approvals: list[str | None] = []
        self.approval_requests: list[str] = []
        self.command_approvals: list[dict[str, Any]] = []
        """The params of each `agent/approveCommand` (for a client that advertises it)."""
        self.edit_requests: list[types.ApplyWorkspaceEditParams] = []
        self.texts: list[str] = []
        self.steps: list[dict[str, Any]] = []
        self.plans: list[list[dict[str, str]]] = []
        self.encoding = "utf-16"
        self.on_edit: Callable[[], None] | None = None
        self.stale_edits: Literal["refuse", "skip"] = "refuse"
        """An edit made for an older version of a document: refused (VS Code), or skipped
        while answering `applied: true` (Neovim 0.11)."""
        self.defer_changes = False
        """Report the applied edits' didChange only on `send_deferred_changes`, as eglot (when
        Emacs is idle) and vim-lsp (after a keystroke) do."""
        self.deferred: dict[str, list[types.TextDocumentContentChangePartial]] = {}
        self.create_files = True
        """Whether a CreateFile is applied; eglot 1.9 cannot destructure one and fails."""
        self.questions: list[Any] = []
        """The params of each `agent/elicit`; answered from `answers` (null when none)."""
        self.answers: list[dict[str, Any] | None] = []
        self.shown_documents: list[Any] = []
        self.received: list[dict[str, Any]] = []
        """Every message the server sent, as the JSON on the wire (in process only)."""
        self.registrations: list[types.Registration] = []
        """What the server registered with `client/registerCapability` (and has not
        unregistered)."""
        self.answered: types.InitializeResult | None = None
        """The server's answer to `initialize`."""

    def uri(self, path: Path) -> str:
        return from_fs_path(str(path)) or path.as_uri()

    def open(self, path: Path, text: str | None = None, language: str = "python") -> str:
        uri = self.uri(path)
        text = path.read_text() if text is None else text
        self.documents[uri] = (text, 1)
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
            )
        )
        return uri

    def type_text(self, uri: str, text: str) -> None:
        """The user edits an open document (unsaved)."""
        _, version = self.documents[uri]
        self.documents[uri] = (text, version + 1)
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def replace(self, uri: str, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        """The user replaces a range (an incremental didChange, as editors send them)."""
        old, version = self.documents[uri]
        edit = types.TextEdit(types.Range(types.Position(*start), types.Position(*end)), text)
        self.documents[uri] = (apply_text_edits(old, [edit], self.encoding), version + 1)
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=edit.range, text=text)
                ],
            )
        )

    def send_deferred_changes(self) -> None:
        for uri, changes in self.deferred.items():
            self.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(
                        uri=uri, version=self.documents[uri][1]
                    ),
                    content_changes=list(changes),
                )
            )
        self.deferred.clear()

    def _apply_deferring(self, uri: str, new_text: str, edits: list[Any]) -> None:
        """Hold the edit in the buffer; its didChange lists the edits bottom-up, each valid
        on the text the one before left, as an editor records them."""
        _, version = self.documents[uri]
        self.documents[uri] = (new_text, version + 1)
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
        self.deferred.setdefault(uri, []).extend(
            types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
            for e in reversed(ordered)
        )

    def _edits_by_uri(self, edit: types.WorkspaceEdit) -> list[tuple[str, int | None, list[Any]]]:
        if edit.document_changes:
            found = []
            for change in edit.document_changes:
                if isinstance(change, types.CreateFile) and not self.create_files:
                    raise ValueError("wrong-type-argument stringp nil")
                if isinstance(change, types.TextDocumentEdit):
                    found.append(
                        (change.text_document.uri, change.text_document.version, list(change.edits))
                    )
            return found
        return [(uri, None, list(edits)) for uri, edits in (edit.changes or {}).items()]

    async def apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.edit_requests.append(params)
        if self.on_edit is not None:
            self.on_edit()
        applied_any = False
        for operation in params.edit.document_changes or []:
            if isinstance(operation, types.DeleteFile) and all(
                self.review(operation.uri, [operation])
            ):
                # A delete the user confirms, as VS Code's refactor preview does.
                self.documents.pop(operation.uri, None)
                Path(to_fs_path(operation.uri) or "").unlink(missing_ok=True)
                applied_any = True
        for uri, version, edits in self._edits_by_uri(params.edit):
            path = Path(to_fs_path(uri) or "")
            if uri in self.documents:
                text, current = self.documents[uri]
                if version is not None and version != current:
                    if self.stale_edits == "skip":
                        applied_any = True
                        continue
                    return types.ApplyWorkspaceEditResult(
                        applied=False, failure_reason=f"{uri} changed (version {current})"
                    )
            else:
                text = path.read_text() if path.exists() else ""
            keep = self.review(uri, edits)
            if not any(keep):
                continue
            applied_any = True
            kept = [e for e, k in zip(edits, keep, strict=True) if k]
            new_text = apply_text_edits(text, kept, self.encoding)
            if uri in self.documents and self.defer_changes:
                self._apply_deferring(uri, new_text, kept)
            elif uri in self.documents:
                self.type_text(uri, new_text)
                if self.save:
                    path.write_text(new_text)
            elif self.save:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(new_text)
        if not applied_any:  # the user's no, which the server words (as the editor clients do)
            return types.ApplyWorkspaceEditResult(applied=False)
        return types.ApplyWorkspaceEditResult(applied=True)

    def approve(self, params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        self.approval_requests.append(params.message)
        answer = self.approvals.pop(0) if self.approvals else None
        return types.MessageActionItem(answer) if answer else None

    def approve_command(self, params: Any) -> dict[str, str] | None:
        asked = {
            "command": params.command,
            "cwd": params.cwd,
            "sandboxed": params.sandboxed,
            "prompt": params.prompt,
            "choices": [{"id": c.id, "title": c.title} for c in params.choices],
        }
        self.command_approvals.append(asked)
        answer = self.approvals.pop(0) if self.approvals else None
        chosen = [c["id"] for c in asked["choices"] if c["title"] == answer]
        return {"choice": chosen[0] if chosen else str(answer)} if answer else None

    async def run_task(self, task: str, token: str | None = None, **extra: Any) -> Any:
        return await self.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="agent.runTask", arguments=[{"task": task, **extra}], work_done_token=token
            )
        )

    def start_task(
        self, task: str, token: str | None = None, **extra: Any
    ) -> tuple[str, asyncio.Future[Any]]:
        """Send runTask without waiting; returns the request id and the answer's future."""
        request_id = str(uuid.uuid4())
        future = self.protocol.send_request(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(
                command="agent.runTask", arguments=[{"task": task, **extra}], work_done_token=token
            ),
            msg_id=request_id,
        )
        return request_id, asyncio.wrap_future(future)

    async def command(self, name: str, *arguments: Any) -> Any:
        return await self.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments))
        )


# pygls passes the client to a handler whose first parameter is named `ls`.
async def _apply_edit(
    ls: EditorClient, params: types.ApplyWorkspaceEditParams
) -> types.ApplyWorkspaceEditResult:
    return await ls.apply_edit(params)


def _approve(
    ls: EditorClient, params: types.ShowMessageRequestParams
) -> types.MessageActionItem | None:
    return ls.approve(params)


def _approve_command(ls: EditorClient, params: Any) -> dict[str, str] | None:
    return ls.approve_command(params)


def _elicit(ls: EditorClient, params: Any) -> dict[str, Any] | None:
    ls.questions.append(params)
    return ls.answers.pop(0) if ls.answers else None


def _register_capability(ls: EditorClient, params: types.RegistrationParams) -> None:
    ls.registrations.extend(params.registrations)


def _unregister_capability(ls: EditorClient, params: types.UnregistrationParams) -> None:
    gone = {each.id for each in params.unregisterations}
    ls.registrations = [each for each in ls.registrations if each.id not in gone]


def _show_document(ls: EditorClient, params: Any) -> types.ShowDocumentResult:
    ls.shown_documents.append(params)
    return types.ShowDocumentResult(success=True)


def answers_questions(capabilities: types.ClientCapabilities) -> None:
    """The client declares it answers `agent/elicit` (and approves commands), as both editor
    clients do."""
    capabilities.experimental = {"agentls": {"approveCommand": True, "elicit": True}}


def _text(ls: EditorClient, params: Any) -> None:
    ls.texts.append(params.text)


def _step(ls: EditorClient, params: Any) -> None:
    ls.steps.append(
        {
            k: getattr(params, k, None)
            for k in ("tool", "summary", "state", "detail", "token", "outputTail")
        }
    )


def _plan(ls: EditorClient, params: Any) -> None:
    ls.plans.append([{"content": i.content, "status": i.status} for i in params.items])


def _make_client(without: tuple[str, ...]) -> EditorClient:
    client = EditorClient()
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.WORKSPACE_APPLY_EDIT] = _apply_edit
    features[types.WINDOW_SHOW_MESSAGE_REQUEST] = _approve
    features["agent/approveCommand"] = _approve_command
    features["agent/elicit"] = _elicit
    features[types.WINDOW_SHOW_DOCUMENT] = _show_document
    features[types.CLIENT_REGISTER_CAPABILITY] = _register_capability
    features[types.CLIENT_UNREGISTER_CAPABILITY] = _unregister_capability
    for method in without:
        features.pop(method, None)
    features["agent/text"] = _text
    features["agent/step"] = _step
    features["agent/plan"] = _plan
    register_lsp_features(client, features)
    return client


def without_annotations(capabilities: types.ClientCapabilities) -> None:
    """A client that applies edits without reviewing hunks (as Neovim does by default)."""
    capabilities.workspace.workspace_edit.change_annotation_support = None  # type: ignore[union-attr]


def approves_commands(capabilities: types.ClientCapabilities) -> None:
    """A client that answers `agent/approveCommand` (as both editor clients do)."""
    capabilities.experimental = {"agentls": {"approveCommand": True}}


CAPABILITIES = {
    "vscode": "visual-studio-code@v1.65.2",
    "neovim": "neovim@v0.11.0",
    "neovim-0.7": "neovim@v0.7.0",
    "emacs": "emacs@v29.1",
}


@asynccontextmanager
async def editor(
    root: Path,
    api_url: str,
    *,
    flavour: str = "vscode",
    settings: dict[str, Any] | None = None,
    initialization: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    arguments: tuple[str, ...] = (),
    capabilities: Callable[[types.ClientCapabilities], None] | None = None,
    without: tuple[str, ...] = (),
    process: bool = False,
) -> AsyncIterator[EditorClient]:
    """An editor connected to a new server: in this process (see in_process.py), or, with
    `process` (or command-line `arguments`), `python -m agentls` on stdio for what only a
    real process shows. `without`: server requests the client does not handle (it answers
    MethodNotFound)."""
    process = process or bool(arguments)
    client = _make_client(without)
    if settings is not None:
        client.set_configuration({"agentls": settings})
    server_env = {
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "test-key-123",
        "XDG_CONFIG_HOME": str(root.parent / "config"),
        **(env or {}),
    }
    async with AsyncExitStack() as stack:
        if process:
            await client.start_io(
                sys.executable, "-m", "agentls", *arguments, env={**os.environ, **server_env}
            )
            stack.push_async_callback(client.stop)
            # Looked up at the end: a test that shut the session down itself replaces it.
            stack.push_async_callback(lambda: client.shutdown_session())
        else:
            stack.enter_context(server_environment(server_env))
            connection = InProcessServer(client, client.received)
            stack.push_async_callback(client.stop)
            stack.push_async_callback(connection.close)
            stack.push_async_callback(client.shutdown_async, None)
        chosen = client_capabilities(CAPABILITIES[flavour])
        if capabilities is not None:
            capabilities(chosen)
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=chosen,
                workspace_folders=[types.WorkspaceFolder(uri=client.uri(root), name="root")],
                initialization_options={"agentls": initialization or {"approveCommands": "always"}},
            )
        )
        client.encoding = str(result.capabilities.position_encoding or "utf-16")
        client.answered = result
        yield client
