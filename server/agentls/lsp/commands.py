"""The commands a client calls with `workspace/executeCommand` (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from pygls import uris
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .. import images
from ..agent.conversation import Conversation
from ..agent.loop import Agent
from ..agent.prompt import task_message
from ..config import project_settings
from ..extensions.commands import for_workspace
from ..extensions.for_task import project_waiting
from ..extensions.mcp_servers import running
from ..extensions.trust import Trust
from ..history.checkpoints import CheckpointError, ShadowRepository
from ..history.sessions import SessionStore
from ..history.undo import listing
from ..images import Image
from ..permissions.modes import MODES, SessionMode, mode_of
from ..wiring import new_conversation, resumed_conversation, undo_and_tell
from .agent_server import REQUEST_FAILED, AgentServer, RunningTask
from .command_table import RESUME_SESSION, RUN_TASK, SET_MODE, UNDO
from .file_context import task_arguments
from .supervision import supervise
from .workspace import LspWorkspace

log = logging.getLogger(__name__)


def refuse_while_running(ls: AgentServer, message: str) -> None:
    if ls.running is not None:
        raise JsonRpcException(message, REQUEST_FAILED)


async def run_task(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    refuse_while_running(
        ls, "A task is already running; wait for it or cancel it with agent.cancel."
    )
    given = task_arguments(RUN_TASK, arguments)
    task = given.task
    images = await asyncio.to_thread(task_images, given.images)
    root = ls.root()
    file = given.file(ls.workspace, root)
    title = task.strip().splitlines()[0][:80]
    if ls.session.journal is None:  # saved from its first task on
        ls.session.journal = new_conversation(root).journal
    message = task_message(task, file)
    result = await supervise(ls, root, title, lambda agent: agent.run(message, task, images))
    # Which session the task went into, so a client can come back to it (agent.resumeSession).
    return {**result, "session": ls.session.id}


def task_images(given: Any) -> list[Image]:
    """agent.runTask's `images`: `[{"uri": "file:///..."} | {"data": base64, "mimeType"}]`,
    each read and checked now (a bad one becomes a placeholder for the model, never an
    error: the user's task still runs)."""
    if not isinstance(given, list) or not all(isinstance(item, dict) for item in given):
        raise JsonRpcInvalidParams('images must be a list of {"uri"} or {"data", "mimeType"}')
    prepared = []
    for number, item in enumerate(given, 1):
        if isinstance(item.get("uri"), str):
            path = Path(uris.to_fs_path(item["uri"]) or "")
            prepared.append(images.from_file(path))
        elif isinstance(item.get("data"), str) and isinstance(item.get("mimeType"), str):
            name = f"image {number}"
            prepared.append(images.from_base64(name, item["data"], item["mimeType"]))
        else:
            raise JsonRpcInvalidParams(
                f'images[{number - 1}] needs "uri", or "data" and "mimeType"'
            )
    return prepared


async def compact(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    refuse_while_running(ls, "A task is running; compact the conversation when it has ended.")
    before = len(ls.session.messages)
    result = await supervise(
        ls, ls.root(), "compact the conversation", Agent.compact, steerable=False
    )
    return {**result, "messages": {"before": before, "after": len(ls.session.messages)}}


def cancel(ls: AgentServer, *arguments: Any) -> dict[str, bool]:
    return {"cancelled": ls.cancel()}


def steer(ls: AgentServer, *arguments: Any) -> dict[str, bool]:
    """Add the user's text to the running task; the model reads it at its next step."""
    if (
        len(arguments) != 1
        or not isinstance(arguments[0], dict)
        or not isinstance(arguments[0].get("text"), str)
        or not arguments[0]["text"].strip()
    ):
        raise JsonRpcInvalidParams('agent.steer takes one argument: {"text": "..."}')
    running = ls.running
    if running is None or running.task.done():
        raise JsonRpcException("No task is running; start one with agent.runTask.", REQUEST_FAILED)
    if not running.steerable:
        raise JsonRpcException(
            "The conversation is being compacted; add your text as the next task.", REQUEST_FAILED
        )
    ls.session.steering.append(arguments[0]["text"].strip())
    return {"queued": True}


def new_session(ls: AgentServer, *arguments: Any) -> dict[str, bool]:
    refuse_while_running(ls, "A task is running; cancel it before starting a new session.")
    ls.session = Conversation()
    ls.mode = None
    return {"ok": True}


async def set_mode(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    """Switch the session's mode between tasks; without a mode, only say which it is."""
    wanted = _one_object(SET_MODE, arguments, required=False).get("mode")
    if wanted is not None:
        refuse_while_running(ls, "A task is running; switch the mode when it has ended.")
        try:
            mode = mode_of(wanted)
        except ValueError as error:
            raise JsonRpcInvalidParams(f"mode: {error}") from None
        # The session's "always" answers outlive a switch of mode.
        ls.mode = ls.mode or SessionMode()
        ls.mode.current = mode
    current = ls.mode.current if ls.mode else (await ls.settings()).mode
    return {"mode": current, "modes": [{"id": m, "description": d} for m, d in MODES.items()]}


def _one_object(name: str, arguments: tuple[Any, ...], required: bool) -> dict[str, Any]:
    if not arguments and not required:
        return {}
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise JsonRpcInvalidParams(f"{name} takes one object argument")
    return arguments[0]


def _failed(error: CheckpointError | OSError) -> JsonRpcException:
    return JsonRpcException(f"agentls: {error}", REQUEST_FAILED)


async def checkpoints(ls: AgentServer, *arguments: Any) -> list[dict[str, object]]:
    try:
        return await asyncio.to_thread(listing, ShadowRepository(ls.root()))
    except (CheckpointError, OSError) as error:
        raise _failed(error) from None


async def undo_to(ls: AgentServer, *arguments: Any) -> dict[str, object]:
    refuse_while_running(ls, "A task is running; undo when it has ended.")
    options = _one_object(UNDO, arguments, required=False)
    target, overwrite = options.get("id"), options.get("overwrite", [])
    if target is not None and (not isinstance(target, int) or isinstance(target, bool)):
        raise JsonRpcInvalidParams("id must be a checkpoint id (a number)")
    if not isinstance(overwrite, list) or not all(isinstance(p, str) for p in overwrite):
        raise JsonRpcInvalidParams("overwrite must be a list of paths")
    root = ls.root()
    editor = LspWorkspace(ls, root)
    job = asyncio.ensure_future(undo_and_tell(root, editor, target, overwrite, ls.session))
    # Held as the running task: no task starts while files are put back, and
    # agent.cancel stops an undo whose reviews the user leaves open.
    ls.running = RunningTask(job, ls.protocol.msg_id, steerable=False)
    try:
        result = await job
    except (CheckpointError, OSError) as error:
        raise _failed(error) from None
    finally:
        ls.running = None
    return result.as_dict()


def _store(ls: AgentServer) -> SessionStore:
    root: Path = ls.root()
    try:
        return SessionStore(root)
    except OSError as error:
        raise _failed(error) from None


def sessions(ls: AgentServer, *arguments: Any) -> list[dict[str, Any]]:
    current = ls.session.id
    return [
        {**info.as_dict(), "current": info.id == current} for info in _store(ls).list_sessions()
    ]


def resume_session(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    refuse_while_running(ls, "A task is running; cancel it before resuming another session.")
    session_id = _one_object(RESUME_SESSION, arguments, required=True).get("id")
    if not isinstance(session_id, str):
        raise JsonRpcInvalidParams('agent.resumeSession takes {"id": "<session id>"}')
    try:
        ls.session, info = resumed_conversation(_store(ls), session_id)
    except KeyError:
        raise JsonRpcInvalidParams(f"no saved session {session_id!r}") from None
    return {**info.as_dict(), "messages": len(ls.session.messages)}


async def mcp_server_list(ls: AgentServer, *arguments: Any) -> list[dict[str, Any]]:
    """The MCP servers of this session: each one started, and the project's waiting for
    the user's approval (never started)."""
    root = ls.root()
    # In a thread: the repository's files are read and parsed to list what waits.
    waiting = await asyncio.to_thread(
        lambda: project_waiting(project_settings.load(root), Trust(root))
    )
    return [
        *(
            {"name": w.name, "source": "project", "state": "waiting for approval", "tools": [],
             "error": "", "command": w.shown}
            for w in waiting
            if w.kind == "mcp"
        ),
        *(server.as_json() for server in running().values()),
    ]  # fmt: skip


async def slash_commands(ls: AgentServer, *arguments: Any) -> list[dict[str, Any]]:
    """The `/` commands a task's text may start with (skills, commands; the project's once
    approved): `[{"name", "description", "hint"}]`, by name."""
    settings = await ls.settings()
    shared = await asyncio.to_thread(for_workspace, ls.root(), settings.plugins)
    return [command.as_json() for command in shared.listing()]
