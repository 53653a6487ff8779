"""Running one piece of agent work (a task, a compaction) as the server's running task:
one at a time, stoppable by `agent.cancel`, `$/cancelRequest` or the client leaving."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..agent.loop import Agent
from ..agent.task_json import task_json
from ..agent.task_result import CANCELLED_BY_USER, TaskResult
from ..interfaces import ModelError
from ..models.anthropic import load_sdk
from ..permissions.modes import SessionMode
from ..wiring import outcome, prepare_task
from .agent_server import AgentServer, RunningTask
from .approver import LspApprover
from .language_servers import ClientLanguageServers, advertised
from .mcp_user import LspMcpUser
from .progress import LspProgress
from .protocol import command_params
from .workspace import LspWorkspace

Work = Callable[[Agent], Awaitable[TaskResult]]


def _cancelled_before_start() -> dict[str, Any]:
    cancelled = TaskResult(status="cancelled", summary=CANCELLED_BY_USER)
    return task_json(cancelled, outcome(cancelled, None))


async def supervise(
    ls: AgentServer, root: Path, title: str, work: Work, steerable: bool = True
) -> dict[str, Any]:
    """Run `work` as the running task and answer with its result."""
    if ls.protocol.msg_id in ls.cancelled_requests:
        return _cancelled_before_start()
    job = asyncio.ensure_future(_run(ls, root, title, work, command_params.get()))
    ls.running = RunningTask(job, ls.protocol.msg_id, steerable)
    try:
        return await job
    except asyncio.CancelledError:
        if not job.cancelled():
            raise
        # Cancelled while the task was being set up, before the loop could answer for itself.
        return _cancelled_before_start()
    finally:
        ls.running = None


async def _run(
    ls: AgentServer,
    root: Path,
    title: str,
    work: Work,
    params: types.ExecuteCommandParams | None,
) -> dict[str, Any]:
    settings = await ls.settings()
    await load_sdk(settings.provider)
    try:
        setup = prepare_task(root, settings, ls.clients)
    except ModelError as error:
        ls.show(types.MessageType.Error, f"{error} {error.hint}")
        failed = TaskResult(status="failed", summary=str(error), error_hint=error.hint)
        return task_json(failed, outcome(failed, None))
    if setup.warning and setup.warning not in ls.warned:
        ls.warned.add(setup.warning)
        ls.show(types.MessageType.Warning, setup.warning)
    token = params.work_done_token if params is not None else None
    progress = await LspProgress.start(ls, token, title, ls.cancel)
    approver = LspApprover(ls, root)
    workspace = LspWorkspace(ls, root)
    ls.mode = ls.mode or SessionMode(settings.mode)
    agent = setup.agent(
        workspace,
        approver,
        progress,
        ls.session,
        extra_tools=advertised(ls.client_capabilities, ls.initialization_options),
        language=ClientLanguageServers(ls),
        mode=ls.mode,
        # A failed MCP server or hook is named as a warning, once (window/showMessage).
        notify=lambda message: ls.show(types.MessageType.Warning, message),
        mcp_user=LspMcpUser(ls, approver.asking),
    )
    result = await work(agent)
    progress.end(setup.outcome(result))
    if result.status == "failed":
        ls.show(types.MessageType.Error, f"{result.summary} {result.error_hint}".strip())
    answer = task_json(
        result, setup.outcome(result), setup.model.name, setup.price, setup.settings.prices
    )
    return {**answer, "mode": ls.mode.current}
