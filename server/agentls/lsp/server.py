"""The language server: `agent.runTask`, `agent.cancel`, `agent.newSession` and
`agent.compact` over LSP."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from .. import __version__
from ..agent import CANCELLED, Agent, Session, TaskResult
from ..interfaces import ModelError
from ..lifetime import exit_now
from ..model import ClientCache, preload
from ..paths import relative
from ..prompt import FileContext, task_message
from ..settings import Settings, parse
from ..wiring import connect
from .approval import LspApprover
from .documents import LspDocuments
from .progress import LspProgress
from .workspace import LspWorkspace

log = logging.getLogger(__name__)

RUN_TASK = "agent.runTask"
CANCEL = "agent.cancel"
NEW_SESSION = "agent.newSession"
COMPACT = "agent.compact"
REQUEST_FAILED = -32803

_command_params: contextvars.ContextVar[types.ExecuteCommandParams | None] = contextvars.ContextVar(
    "command_params", default=None
)


class AgentProtocol(LanguageServerProtocol):
    """pygls's protocol, with what agentls needs and pygls 2.1 hides or gets wrong.

    It keeps the executeCommand params (for the workDoneToken), routes `$/cancelRequest` to
    a running (or not yet started) task, holds documents that split lines as LSP does,
    survives a shutdown while a request is pending, forgets finished notifications, and
    ends the running task (not itself, in a loop of failed error reports) when the client
    is gone.
    """

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        super().set_writer(ClientOutput(writer, self._client_gone), include_headers)

    def _client_gone(self) -> None:
        log.warning("the client's end of the connection is closed; cancelling the task")
        server = self._server
        if isinstance(server, AgentServer):
            server.cancel()

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> NoReturn:
        exit_now(0 if self._shutdown else 1)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        _command_params.set(params)
        return (yield from super().lsp_workspace__execute_command(params))

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        result = yield from super().lsp_initialize(params)
        # No document is open before initialize is answered, so the swap loses nothing.
        self._workspace = LspDocuments.replacing(self._workspace)
        return result

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        server = self._server
        if isinstance(server, AgentServer):
            server.cancel_request(msg_id)
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> None:
        # pygls cancels the pending requests while iterating over the dict that a cancelled
        # request removes itself from; over a copy, shutdown cannot fail.
        server = self._server
        if isinstance(server, AgentServer):
            server.cancel()
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True

    def _execute_handler(
        self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        # pygls keeps the future of every handled notification forever (one per keystroke):
        # forget each once it is done, as pygls already does for answered requests.
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda done: self._forget(msg_id, done))

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]


class ClientOutput:
    """The channel to the client. Once it is closed or broken, messages are dropped: pygls
    would raise into the task, or report the failure by sending to the client again, and
    fail again, over and over."""

    def __init__(self, writer: Any, on_gone: Callable[[], None]) -> None:
        self.writer = writer
        self.on_gone = on_gone
        self.gone = False

    def write(self, data: bytes) -> Any:
        if self.gone:
            return None
        try:
            return self.writer.write(data)
        except (OSError, ValueError):  # a broken pipe, or a closed file
            self.gone = True
            self.on_gone()
            return None

    def close(self) -> Any:
        self.gone = True
        return self.writer.close()


@dataclass
class RunningTask:
    task: asyncio.Future[dict[str, Any]]
    request_id: Any


class AgentServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("agentls", __version__, protocol_cls=AgentProtocol)
        self.session = Session()
        self.running: RunningTask | None = None
        self.clients = ClientCache()
        self.initialization_options: Any = None
        self.cancelled_requests: deque[Any] = deque(maxlen=32)
        self.warned: set[str] = set()
        """Warnings already shown, each shown once per server (one editor session)."""

    def cancel(self) -> bool:
        if self.running is None or self.running.task.done():
            return False
        self.running.task.cancel()
        return True

    def cancel_request(self, request_id: Any) -> None:
        if self.running is not None and self.running.request_id == request_id:
            self.cancel()
        else:
            # It may be an agent.runTask whose handler has not started yet.
            self.cancelled_requests.append(request_id)

    def root(self) -> Path:
        folders = self.workspace.folders
        if folders:
            return Path(to_fs_path(next(iter(folders.values())).uri) or ".")
        if self.workspace.root_path:
            return Path(self.workspace.root_path)
        raise JsonRpcException("agentls needs a workspace folder (open a folder).", REQUEST_FAILED)

    async def settings(self) -> Settings:
        """Settings from initializationOptions, overridden by workspace/configuration."""
        options = self.initialization_options
        raw: dict[str, Any] = {}
        if isinstance(options, dict) and isinstance(options.get("agentls"), dict):
            raw.update(options["agentls"])
        workspace = self.client_capabilities.workspace
        if workspace and workspace.configuration:
            try:
                pulled = await self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="agentls")])
                )
                if pulled and isinstance(pulled[0], dict):
                    raw.update(pulled[0])
            except Exception as error:  # a client that fails here still gets a working task
                log.warning("workspace/configuration failed: %s", error)
        settings, problems = parse(raw)
        for problem in problems:
            self.show(types.MessageType.Warning, problem)
        return settings

    def show(self, kind: types.MessageType, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"agentls: {message}"))


server = AgentServer()


def _position(value: Any) -> types.Position:
    try:
        line, character = value["line"], value["character"]
    except (KeyError, TypeError):
        raise JsonRpcInvalidParams("selection must be an LSP Range") from None
    if not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (line, character)
    ):
        raise JsonRpcInvalidParams("selection positions need whole line and character numbers")
    return types.Position(line, character)


def _file_context(ls: AgentServer, root: Path, uri: str, selection: Any) -> FileContext:
    """What the model is told of the file the task was given in, and of its selection."""
    path = Path(to_fs_path(uri) or uri)
    name = relative(root, path) if path.is_absolute() else uri
    document = ls.workspace.text_documents.get(unquote(uri))
    language = document.language_id if document is not None else None
    if selection is None:
        return FileContext(name, language)
    if not isinstance(selection, dict):
        raise JsonRpcInvalidParams("selection must be an LSP Range")
    start, end = _position(selection.get("start")), _position(selection.get("end"))
    text = ""
    if document is not None and (start.line, start.character) != (end.line, end.character):
        # offset_at_position converts from the client's units (and clamps).
        text = document.source[
            document.offset_at_position(start) : document.offset_at_position(end)
        ]
    return FileContext(
        name,
        language,
        cursor_line=end.line + 1,
        selection=text or None,
        selection_lines=(start.line + 1, end.line + 1) if text else None,
    )


@server.feature(types.INITIALIZE)
def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
    ls.initialization_options = params.initialization_options


@server.feature(types.INITIALIZED)
def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
    preload()


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
    """Nothing to do: asking for saves makes clients send their pending changes with each
    save (Neovim holds didChange back up to 150 ms, and flushes it before any other
    notification), so an accepted edit that the client saved settles at once."""


def _cancelled_before_start() -> dict[str, Any]:
    return TaskResult("cancelled", CANCELLED).as_dict()


@server.command(RUN_TASK)
async def run_task(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    _refuse_while_running(
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
    file = _file_context(ls, root, uri, arguments[0].get("selection")) if uri else None
    title = task.strip().splitlines()[0][:80]
    return await _supervise(ls, root, title, lambda agent: agent.run(task_message(task, file)))


@server.command(COMPACT)
async def compact(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    _refuse_while_running(ls, "A task is running; compact the conversation when it has ended.")
    before = len(ls.session.messages)
    result = await _supervise(ls, ls.root(), "compact the conversation", Agent.compact)
    return {**result, "messages": {"before": before, "after": len(ls.session.messages)}}


def _refuse_while_running(ls: AgentServer, message: str) -> None:
    if ls.running is not None:
        raise JsonRpcException(message, REQUEST_FAILED)


async def _supervise(
    ls: AgentServer,
    root: Path,
    title: str,
    work: Callable[[Agent], Awaitable[TaskResult]],
) -> dict[str, Any]:
    """Run one piece of agent work as the running task, which agent.cancel can stop."""
    if ls.protocol.msg_id in ls.cancelled_requests:
        return _cancelled_before_start()
    job = asyncio.ensure_future(_run(ls, root, title, work, _command_params.get()))
    ls.running = RunningTask(job, ls.protocol.msg_id)
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
    work: Callable[[Agent], Awaitable[TaskResult]],
    params: types.ExecuteCommandParams | None,
) -> dict[str, Any]:
    settings = await ls.settings()
    try:
        connection = connect(root, settings, ls.clients)
    except ModelError as error:
        ls.show(types.MessageType.Error, f"{error} {error.hint}")
        return TaskResult("failed", str(error), error_hint=error.hint).as_dict()
    if connection.warning and connection.warning not in ls.warned:
        ls.warned.add(connection.warning)
        ls.show(types.MessageType.Warning, connection.warning)
    token = params.work_done_token if params is not None else None
    progress = await LspProgress.start(ls, token, title, ls.cancel)
    agent = connection.agent(LspWorkspace(ls, root), LspApprover(ls), progress, ls.session)
    result = await work(agent)
    progress.end(connection.outcome(result))
    if result.status == "failed":
        ls.show(types.MessageType.Error, f"{result.summary} {result.error_hint}".strip())
    return connection.result(result)


@server.command(CANCEL)
def cancel(ls: AgentServer, *arguments: Any) -> dict[str, bool]:
    return {"cancelled": ls.cancel()}


@server.command(NEW_SESSION)
def new_session(ls: AgentServer, *arguments: Any) -> dict[str, bool]:
    _refuse_while_running(ls, "A task is running; cancel it before starting a new session.")
    ls.session = Session()
    return {"ok": True}
