"""Background tasks over LSP: start one (`agent.runInBackground`), list them
(`agent.backgroundTasks`), cancel, discard, and review one into the user's files
(`agent.reviewBackgroundTask`); `agent/backgroundTask` tells the client when one changes.

The tasks run in processes of their own (`agentls.background`); this server only starts
them and reads their folders, so it may be restarted, or the editor closed, while they run.
A review is the server's running task (no task starts meanwhile, `agent.cancel` withdraws
it) and is recorded as a task in the checkpoints: Undo Last Task takes it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..agent.prompt import task_message
from ..background import control, records, review
from ..background.control import BackgroundError, Options
from ..background.landing import carry_out
from ..background.transcript import transcript
from ..disk import files
from ..disk.paths import relative
from ..edits import landed
from ..permissions.gate import Gate
from ..permissions.rules import Rules
from ..tools.file_tools import written_once_allowed
from .agent_server import REQUEST_FAILED, AgentServer, RunningTask
from .approver import LspApprover
from .command_table import CANCEL_BACKGROUND, DISCARD, LOG, REVIEW, RUN_IN_BACKGROUND
from .file_context import task_arguments
from .workspace import LspWorkspace, uri_of

CHANGED = "agent/backgroundTask"

POLL = 0.5
"""Seconds between two looks at the folders of the tasks that run (they are other
processes: a look is a few small file reads)."""


@dataclass
class Watch:
    """What the client was last told of each task, and the loop that tells it more."""

    seen: dict[str, dict[str, Any]] = field(default_factory=dict)
    loop: asyncio.Task[None] | None = None


_watches: weakref.WeakKeyDictionary[AgentServer, Watch] = weakref.WeakKeyDictionary()
"""Each server's watch (a test builds many servers in one process)."""


def _watch(ls: AgentServer) -> Watch:
    return _watches.setdefault(ls, Watch())


def _failed(error: Exception) -> JsonRpcException:
    return JsonRpcException(f"agentls: {error}", REQUEST_FAILED)


def _task_id(name: str, arguments: tuple[Any, ...]) -> str:
    if (
        len(arguments) != 1
        or not isinstance(arguments[0], dict)
        or not isinstance(arguments[0].get("id"), str)
    ):
        raise JsonRpcInvalidParams(f'{name} takes one argument: {{"id": "<task id>"}}')
    return str(arguments[0]["id"])


async def run_in_background(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    given = task_arguments(RUN_IN_BACKGROUND, arguments)
    task = given.task
    root = ls.root()
    file = given.file(ls.workspace, root)
    settings = await ls.settings()
    raw, _ = await ls.raw_settings()
    try:
        entry = await asyncio.to_thread(
            control.start, root, task, task_message(task, file), Options.of(settings, raw)
        )
    except (BackgroundError, OSError) as error:
        raise _failed(error) from None
    watch = _watch(ls)
    watch.seen[entry.record.id] = entry.as_json()
    _notify(ls, entry.as_json())
    _keep_watching(ls)
    return {"id": entry.record.id, "branch": entry.record.branch, "worktree": entry.record.tree}


async def background_tasks(ls: AgentServer, *arguments: Any) -> list[dict[str, Any]]:
    root = ls.root()
    settings = await ls.settings()
    try:
        await asyncio.to_thread(control.clean, root, settings.background_keep_days)
        entries = await asyncio.to_thread(records.listing, root.resolve())
    except OSError as error:
        raise _failed(error) from None
    listed = [entry.as_json() for entry in entries]
    # What the watch told the client stays as it was: it tells of each change it sees,
    # whoever else looked meanwhile.
    if any(item["status"] in records.ACTIVE for item in listed):
        _keep_watching(ls)
    return listed


async def cancel_background(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    task_id = _task_id(CANCEL_BACKGROUND, arguments)
    try:
        entry = await asyncio.to_thread(control.cancel, ls.root(), task_id)
    except BackgroundError as error:
        raise _failed(error) from None
    return {"cancelled": entry.status.status in records.ACTIVE}


async def discard(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    task_id = _task_id(DISCARD, arguments)
    try:
        await asyncio.to_thread(control.discard, ls.root(), task_id)
    except BackgroundError as error:
        raise _failed(error) from None
    _watch(ls).seen.pop(task_id, None)
    return {"discarded": True}


async def task_log(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    """The task's transcript, as `agentls tasks log` prints it."""
    task_id = _task_id(LOG, arguments)
    entry = await asyncio.to_thread(records.find, ls.root().resolve(), task_id)
    if entry is None:
        raise _failed(BackgroundError(f"no background task {task_id}"))
    return {"text": await asyncio.to_thread(transcript, entry)}


def _notify(ls: AgentServer, item: dict[str, Any]) -> None:
    ls.protocol.notify(CHANGED, item)


def _keep_watching(ls: AgentServer) -> None:
    watch = _watch(ls)
    if watch.loop is None or watch.loop.done():
        watch.loop = asyncio.ensure_future(_watching(ls, watch))


async def _watching(ls: AgentServer, watch: Watch) -> None:
    """Tell the client of each change of a task it was told of, while any still runs."""
    root = ls.root().resolve()
    while True:
        await asyncio.sleep(POLL)
        try:
            entries = await asyncio.to_thread(records.listing, root)
        except OSError:
            continue
        active = False
        for entry in entries:
            item = entry.as_json()
            active = active or item["status"] in records.ACTIVE
            if watch.seen.get(item["id"]) != item:
                watch.seen[item["id"]] = item
                _notify(ls, item)
        if not active:
            return


async def review_task(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    task_id = _task_id(REVIEW, arguments)
    if ls.running is not None:
        raise JsonRpcException(
            "A task is running; review the background task when it has ended.", REQUEST_FAILED
        )
    root = ls.root()
    try:
        entry = control.found(root, task_id)
    except BackgroundError as error:
        raise _failed(error) from None
    if entry.status.status in records.ACTIVE:
        raise _failed(BackgroundError(f"task {task_id} is still {entry.status.status}"))
    if entry.status.commit is None:
        raise _failed(BackgroundError(f"task {task_id} left no change to review"))
    job = asyncio.ensure_future(_review(ls, root, entry))
    ls.running = RunningTask(job, ls.protocol.msg_id, steerable=False)
    try:
        return await job
    except asyncio.CancelledError:
        if not job.cancelled():
            raise
        return {"id": task_id, "status": "cancelled", "files": [], "binary": [], "conflicts": []}
    finally:
        ls.running = None


async def _review(ls: AgentServer, root: Path, entry: records.Entry) -> dict[str, Any]:
    record, commit = entry.record, entry.status.commit
    assert commit is not None
    workspace = LspWorkspace(ls, root)
    tool = f"background task {record.id}"
    plan = await asyncio.to_thread(
        review.plan, root, record.base, commit, workspace.open_documents(), tool
    )
    title = f"review of background task {record.id}: {record.title}"
    reviewer = EditorReviewer(ls, workspace, LspApprover(ls, root))
    reports = await carry_out(root, plan, reviewer, ls.session, title)
    entry.status.reviewed = True
    await asyncio.to_thread(entry.save)
    await asyncio.to_thread(control.remove_tree, entry)  # the branch stays
    conflicts = [c for item in plan.files for c in item.conflicts]
    if conflicts:
        ls.show(types.MessageType.Warning, f"not applied (conflicts): {'; '.join(conflicts)}")
    declined = [f"{r['path']} ({r['reason']})" for r in reports if r["declined"]]
    if declined:
        left = f"not applied, left on the branch {record.branch}: {'; '.join(declined)}"
        ls.show(types.MessageType.Warning, left)
    _notify(ls, entry.as_json())
    return {
        "id": record.id,
        "status": "reviewed",
        "files": reports,
        "binary": plan.binary,
        "conflicts": conflicts,
        "branch": record.branch,
    }


class EditorReviewer:
    """A review's files proposed as any edit of the agent's: `workspace/applyEdit`, hunk by
    hunk where the editor reviews hunks; a deletion as a `DeleteFile` to confirm."""

    def __init__(self, ls: AgentServer, workspace: LspWorkspace, approver: LspApprover) -> None:
        self.ls, self.workspace, self.root = ls, workspace, workspace.root
        self.gate = Gate(rules=Rules(), root=self.root, approver=approver)
        """For a file the editor cannot show (no workspace/applyEdit): the user is asked."""

    async def change(self, item: review.FileReview) -> tuple[int, str]:
        change = item.change
        assert change is not None
        answer = await self.workspace.propose(change)
        if answer.question:
            answer = await written_once_allowed(self.gate, self.workspace, change, answer.question)
        if not answer.applied:
            return 0, answer.rejected_reason or "rejected"
        after = answer.text
        if after is None:
            after = _now(self.workspace, self.root, change.path)
        kept = landed(change.old_text or "", change.hunks, after) if after is not None else None
        return (sum(kept) if kept is not None else len(change.hunks)), ""

    async def delete(self, item: review.FileReview) -> tuple[bool, str]:
        return await _delete(self.ls, self.workspace, self.root / item.path, item.path)


def _now(workspace: LspWorkspace, root: Path, path: Path) -> str | None:
    text = workspace.open_text(path)
    if text is not None:
        return text
    with contextlib.suppress(OSError, files.NotText):
        return files.read_text(root, path)
    return None


async def _delete(
    ls: AgentServer, workspace: LspWorkspace, path: Path, name: str
) -> tuple[bool, str]:
    """The task's deletion of a file, proposed as a `DeleteFile` the user confirms."""
    if not workspace.can_delete():
        return False, "this editor cannot delete files through an edit; delete it yourself"
    annotation = f"delete:{name}"
    supported = workspace.reviews_hunks()
    operation = types.DeleteFile(
        uri=uri_of(path),
        options=types.DeleteFileOptions(ignore_if_not_exists=True),
        annotation_id=annotation if supported else None,
    )
    annotations = (
        {annotation: types.ChangeAnnotation(label=f"delete {name}", needs_confirmation=True)}
        if supported
        else None
    )
    params = types.ApplyWorkspaceEditParams(
        edit=types.WorkspaceEdit(document_changes=[operation], change_annotations=annotations),
        label=f"background task: delete {relative(workspace.root, path)}",
    )
    try:
        answer = await ls.workspace_apply_edit_async(params)
    except JsonRpcException as error:
        return False, error.message or "the editor refused it"
    return bool(answer.applied), "" if answer.applied else (answer.failure_reason or "rejected")
