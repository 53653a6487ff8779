"""The ACP client's files as the agent's workspace: read and written through `fs/*` when the
client offers it (its buffers, unsaved changes), else the disk. In a mode that reviews edits
each edit is put to the user with `session/request_permission` first, its diff attached."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import acp
from acp.schema import ClientCapabilities, FileEditToolCallContent, ToolCallLocation

from ..disk import files
from ..disk.landing import land_on_disk
from ..disk.paths import relative
from ..interfaces import Change, Landed
from .approver import AcpApprover
from .progress import step_in_flight
from .updates import Updates


class FileClient(Protocol):
    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any: ...

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> Any: ...


class AcpWorkspace:
    def __init__(
        self,
        client: FileClient,
        session_id: str,
        root: Path,
        capabilities: ClientCapabilities | None,
        updates: Updates,
        approver: AcpApprover,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.root = root
        fs = capabilities.fs if capabilities is not None else None
        self.client_reads = bool(fs and fs.read_text_file)
        self.client_writes = bool(fs and fs.write_text_file)
        self.updates = updates
        self.approver = approver

    async def read_text(self, path: Path) -> str:
        # The disk first: it says what is missing, binary, too large or not a regular file.
        text = files.read_text(self.root, path)
        if not self.client_reads:
            return text
        response = await self.client.read_text_file(self.session_id, str(path))
        return str(response.content)

    def open_documents(self) -> dict[Path, str]:
        # ACP names no open documents: searches read the disk (read_file still asks the
        # client for a file's text).
        return {}

    async def propose(self, change: Change) -> Landed:
        name = relative(self.root, change.path)
        diff = FileEditToolCallContent(
            type="diff", path=str(change.path), old_text=change.old_text, new_text=change.new_text
        )
        self._show(change, diff)
        # Asked here whatever the client offers: a client's fs/write_text_file may write
        # blindly (CodeCompanion saves the buffer, agent-shell the file), so a write through
        # it is no review. Only a mode or rule that lands edits unreviewed skips the question.
        if change.reviewed and not await self.approver.approve_edit(name, diff):
            return Landed(False, rejected_reason="the user rejected it")
        if self.client_writes:  # its buffer, and its own record of changes (Zed's)
            await self.client.write_text_file(self.session_id, str(change.path), change.new_text)
            return Landed(True, change.new_text)
        return land_on_disk(self.root, change)

    def _show(self, change: Change, diff: FileEditToolCallContent) -> None:
        """The step in flight gets the diff and the line it starts at, so the editor can
        draw the change and follow along."""
        step = step_in_flight(self.approver.progress)
        if step is None:
            return
        line = change.hunks[0].line - 1 if change.hunks else 0  # ACP counts lines from 0
        self.updates.send(
            acp.update_tool_call(
                step,
                content=[diff],
                locations=[ToolCallLocation(path=str(change.path), line=line)],
            )
        )
