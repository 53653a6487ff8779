"""pygls's protocol, with what agentls needs and pygls 2.1 hides or gets wrong."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Generator
from typing import Any, Protocol, runtime_checkable

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from ..serving.lifetime import exit_now
from .documents import LspDocuments

log = logging.getLogger(__name__)

command_params: contextvars.ContextVar[types.ExecuteCommandParams | None] = contextvars.ContextVar(
    "command_params", default=None
)
"""The params of the executeCommand being handled: pygls passes only its arguments on, and
the workDoneToken is needed too. The value reaches the command's task."""


@runtime_checkable
class TaskOwner(Protocol):
    """What the protocol needs of the server: stopping the task a request runs."""

    def cancel(self) -> bool: ...

    def cancel_request(self, request_id: Any) -> None: ...

    def leave(self, code: int) -> None:
        """The client sent `exit`."""

    def answered_initialize(self, capabilities: types.ServerCapabilities) -> None:
        """Shape the capabilities the initialize answer advertises."""


class AgentProtocol(LanguageServerProtocol):
    """It keeps the executeCommand params (for the workDoneToken), routes `$/cancelRequest`
    to a running (or not yet started) task, lets the server decide what `exit` ends, drops
    answers to requests a cancelled task no longer waits for, holds documents that split
    lines as LSP does, survives a shutdown while a request is pending, forgets finished
    notifications, and ends the running task (not itself, in a loop of failed error reports)
    when the client is gone.
    """

    def _owner(self) -> TaskOwner | None:
        server = self._server
        return server if isinstance(server, TaskOwner) else None

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        super().set_writer(ClientOutput(writer, self._client_gone), include_headers)

    def _client_gone(self) -> None:
        log.warning("the client's end of the connection is closed; cancelling the task")
        owner = self._owner()
        if owner is not None:
            owner.cancel()

    @lsp_method(types.EXIT)
    # pygls's handler is a generator; a plain method is called the same way.
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]
        code = 0 if self._shutdown else 1
        owner = self._owner()
        if owner is None:
            exit_now(code)
        owner.leave(code)

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        future = self._request_futures.get(msg_id)
        if future is not None and future.cancelled():
            # Asked by a task that was cancelled meanwhile (a progress token or the settings
            # being fetched): the late answer is nobody's. pygls would report its failure to
            # complete the future to the user as "Error in server: CANCELLED: <Future ...>".
            del self._request_futures[msg_id]
            return
        super()._handle_response(msg_id, result, error)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        command_params.set(params)
        return (yield from super().lsp_workspace__execute_command(params))

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        result = yield from super().lsp_initialize(params)
        owner = self._owner()
        if owner is not None:
            owner.answered_initialize(result.capabilities)
        # No document is open before initialize is answered, so the swap loses nothing.
        self._workspace = LspDocuments.replacing(self.workspace)
        return result

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        owner = self._owner()
        if owner is not None:
            owner.cancel_request(msg_id)
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        # pygls cancels the pending requests while iterating over the dict that a cancelled
        # request removes itself from; over a copy, shutdown cannot fail.
        owner = self._owner()
        if owner is not None:
            owner.cancel()
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
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
