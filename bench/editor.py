"""A small editor on the client side of LSP, driving a server process as VS Code would.

It keeps the documents it opened, applies `workspace/applyEdit` (accepting every hunk),
sends the change back as an incremental `didChange` and saves, answers
`workspace/configuration` and progress requests, and notes when each edit arrived and how
many bytes it took on the wire.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path


@dataclass(frozen=True)
class EditArrival:
    at: float
    """time.monotonic() when the client read the request."""
    wire_bytes: int
    """The JSON-RPC message body's size (Content-Length)."""


class MeasuringProtocol(LanguageServerProtocol):
    """Notes the arrival and size of each `workspace/applyEdit` request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.edit_arrivals: list[EditArrival] = []

    def structure_message(self, data: dict[str, Any]) -> Any:
        # Called for every JSON object of a message, innermost first; only the envelope
        # has "jsonrpc". Re-encoding it as pygls encodes gives the body's length on the wire.
        if "jsonrpc" in data and data.get("method") == types.WORKSPACE_APPLY_EDIT:
            self.edit_arrivals.append(EditArrival(time.monotonic(), len(json.dumps(data))))
        return super().structure_message(data)


def offset_at(text: str, position: types.Position) -> int:
    """The string index of an LSP position counted in UTF-16 units (LF line endings)."""
    start = 0
    for _ in range(position.line):
        start = text.index("\n", start) + 1
    units = 0
    index = start
    while units < position.character and index < len(text) and text[index] != "\n":
        units += 2 if ord(text[index]) > 0xFFFF else 1
        index += 1
    return index


Edit = types.TextEdit | types.AnnotatedTextEdit
"""What agentls sends in a TextDocumentEdit (docs/protocol.md): never a SnippetTextEdit."""


def plain_edits(edits: Sequence[Edit | types.SnippetTextEdit]) -> list[Edit]:
    found: list[Edit] = []
    for edit in edits:
        if isinstance(edit, types.SnippetTextEdit):
            raise TypeError("agentls sent a SnippetTextEdit, which its protocol never sends")
        found.append(edit)
    return found


def apply_edits(text: str, edits: list[Edit]) -> tuple[str, list[Edit]]:
    """The text with the edits applied, and the edits in the order they were applied
    (last first, so that every edit's positions hold in the text it is applied to)."""
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]
    for edit in ordered:
        start, end = offset_at(text, edit.range.start), offset_at(text, edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text, ordered


class BenchEditor(LanguageClient):
    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__("agentls-bench", "1", protocol_cls=MeasuringProtocol)
        self.settings = settings
        self.documents: dict[str, tuple[str, int]] = {}
        self.errors: list[str] = []
        self._register()

    @property
    def measuring(self) -> MeasuringProtocol:
        assert isinstance(self.protocol, MeasuringProtocol)
        return self.protocol

    @property
    def pid(self) -> int:
        assert self._server is not None
        return self._server.pid

    def _register(self) -> None:
        # Registered by call: pygls's client `feature` decorator is unannotated.
        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return self.apply_workspace_edit(params.edit)

        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [self.settings for _ in params.items]

        def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        def show_message(params: types.ShowMessageParams) -> None:
            if params.type in (types.MessageType.Error, types.MessageType.Warning):
                self.errors.append(params.message)

        self.feature(types.WORKSPACE_APPLY_EDIT)(apply_edit)
        self.feature(types.WORKSPACE_CONFIGURATION)(configuration)
        self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)(create_progress)
        self.feature(types.WINDOW_SHOW_MESSAGE)(show_message)

        # An editor without language servers: no problems, no places, nothing slow.
        self.feature("agent/diagnostics")(_no_problems)
        for method in ("agent/definition", "agent/references"):
            self.feature(method)(_no_locations)
        self.feature("agent/symbols")(_no_symbols)

        # An editor would show these; the bench only reads them.
        shown = ("agent/step", "agent/text", "agent/output", "agent/subagent")
        for method in (types.PROGRESS, types.WINDOW_LOG_MESSAGE, *shown):
            self.feature(method)(_shown)

    async def start(self, command: list[str], env: dict[str, str], root: Path) -> float:
        """Spawn the server and initialize it; the seconds from spawn to the answer."""
        started = time.perf_counter()
        await self.start_io(*command, env=env)
        await self.initialize_async(
            types.InitializeParams(
                process_id=None,
                capabilities=_capabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=_uri(root), name=root.name)],
                initialization_options={"agentls": self.settings},
            )
        )
        elapsed = time.perf_counter() - started
        self.initialized(types.InitializedParams())
        return elapsed

    async def close(self) -> None:
        await self.shutdown_async(None)
        self.exit(None)
        stop: Callable[[], Awaitable[None]] = super().stop  # pygls leaves it unannotated
        await stop()

    def open(self, path: Path, language: str = "python") -> None:
        uri, text = _uri(path), path.read_text()
        self.documents[uri] = (text, 1)
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, text))
        )

    async def run_task(self, task: str) -> dict[str, Any]:
        result = await self.workspace_execute_command_async(
            types.ExecuteCommandParams(command="agent.runTask", arguments=[{"task": task}])
        )
        if not isinstance(result, dict) or result.get("status") != "done":
            raise RuntimeError(f"the task did not finish: {result!r} {self.errors}")
        return result

    async def command(self, name: str) -> Any:
        """The answer to `agent.<name>` with no argument."""
        return await self.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[])
        )

    async def new_session(self) -> None:
        await self.workspace_execute_command_async(
            types.ExecuteCommandParams(command="agent.newSession", arguments=[])
        )

    def apply_workspace_edit(self, edit: types.WorkspaceEdit) -> types.ApplyWorkspaceEditResult:
        for change in edit.document_changes or []:
            if not isinstance(change, types.TextDocumentEdit):
                continue
            uri = change.text_document.uri
            path = Path(to_fs_path(uri) or "")
            text, version = self.documents.get(uri, (None, None))
            if version is not None and change.text_document.version != version:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="stale")
            new_text, applied = apply_edits(
                text if text is not None else path.read_text(), plain_edits(change.edits)
            )
            if version is not None:
                self._changed(uri, new_text, version + 1, applied)
            path.write_text(new_text)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _changed(self, uri: str, text: str, version: int, edits: list[Edit]) -> None:
        self.documents[uri] = (text, version)
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                    for e in edits
                ],
            )
        )


def _shown(params: Any) -> None:
    pass


def _uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def _no_problems(params: Any) -> dict[str, Any]:
    return {"items": []}


def _no_locations(params: Any) -> dict[str, Any]:
    return {"locations": []}


def _no_symbols(params: Any) -> dict[str, Any]:
    return {"symbols": []}


def _capabilities() -> types.ClientCapabilities:
    """What VS Code offers for the parts agentls uses."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                change_annotation_support=types.ChangeAnnotationsSupportOptions(
                    groups_on_label=True
                ),
            ),
            configuration=True,
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
        # Every optional tool offered, as the editor clients offer them: the fixed overhead
        # is measured with all of them.
        experimental={
            "agentls": {
                name: True for name in ("diagnostics", "definition", "references", "symbols")
            }
        },
    )


def server_command(name: str) -> list[str]:
    """The command line of a server: "agentls", or "bare" for the bare pygls server."""
    if name == "agentls":
        return [sys.executable, "-m", "agentls"]
    return [sys.executable, str(Path(__file__).with_name("bare_server.py"))]


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, user and system (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resident_kib(pid: int) -> int:
    """The process's resident set size (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")
