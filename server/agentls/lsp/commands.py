"""The commands a client calls with `workspace/executeCommand` (docs/protocol.md)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..agent import Agent, Session
from ..prompt import task_message
from .agent_server import REQUEST_FAILED, AgentServer
from .file_context import file_context
from .supervision import supervise

RUN_TASK = "agent.runTask"
CANCEL = "agent.cancel"
NEW_SESSION = "agent.newSession"
COMPACT = "agent.compact"
STEER = "agent.steer"


def refuse_while_running(ls: AgentServer, message: str) -> None:
    if ls.running is not None:
        raise JsonRpcException(message, REQUEST_FAILED)


async def run_task(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    refuse_while_running(
        ls, "A task is already running; wait for it or cancel it with agent.cancel."
    )
    if (
        len(arguments) != 1
        or not isinstance(arguments[0], dict)
        or not isinstance(arguments[0].get("task"), str)
        or not arguments[0]["task"].strip()
    ):
        raise JsonRpcInvalidParams(
            'agent.runTask takes one argument: {"task": "...", "uri"?: ..., "selection"?: ...}'
        )
    task, uri = arguments[0]["task"], arguments[0].get("uri")
    if uri is not None and not isinstance(uri, str):
        raise JsonRpcInvalidParams("uri must be a document URI string")
    root = ls.root()
    file = file_context(ls.workspace, root, uri, arguments[0].get("selection")) if uri else None
    title = task.strip().splitlines()[0][:80]
    return await supervise(ls, root, title, lambda agent: agent.run(task_message(task, file)))


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
    ls.session = Session()
    return {"ok": True}


COMMANDS = {
    RUN_TASK: run_task,
    CANCEL: cancel,
    STEER: steer,
    NEW_SESSION: new_session,
    COMPACT: compact,
}
