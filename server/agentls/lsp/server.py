"""`make_server`: a language server with every feature and command of agentls registered."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from .agent_server import AgentServer
from .command_table import COMMANDS
from .inline import (
    copilot_inline_edit,
    did_change,
    did_change_configuration,
    did_close,
    did_open,
    inline_completion,
)

COPILOT_INLINE_EDIT = "textDocument/copilotInlineEdit"
"""Copilot LS's next-edit request, for clients built for it (docs/completions.md)."""


def _initialize(ls: AgentServer, params: types.InitializeParams) -> None:
    ls.initialization_options = params.initialization_options


def _initialized(ls: AgentServer, params: types.InitializedParams) -> None:
    # Imported here, after the initialize answer: the editor waits for that one. The
    # model's SDK is imported by the first task (`load_sdk`), not here: idle, the server
    # holds only what the editor's requests need.
    from ..shell import sandbox

    sandbox.probe_in_background()
    ls.begin_proof()


def _did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
    """Nothing to do: asking for saves makes clients send their pending changes with each
    save (Neovim holds didChange back up to 150 ms, and flushes it before any other
    notification), so the document here is the client's own report as soon as it saves."""


def _command(module: str, function: str) -> Callable[..., Any]:
    """The command carried out by `function` of `module`, imported at its first call, and
    run only once the client has shown the TCP token (at once on stdio)."""

    async def proven(ls: AgentServer, *arguments: Any) -> Any:
        await ls.prove()
        handler = getattr(importlib.import_module(f"{__package__}.{module}"), function)
        result = handler(ls, *arguments)
        return await result if inspect.isawaitable(result) else result

    proven.__name__ = proven.__qualname__ = function
    return proven


def make_server() -> AgentServer:
    """A new server, ready to start on any transport (or to be driven in process by tests)."""
    server = AgentServer()
    server.feature(types.INITIALIZE)(_initialize)
    server.feature(types.INITIALIZED)(_initialized)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(_did_save)
    # A task pulls its own settings at its start; completions read them again on a change.
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(COPILOT_INLINE_EDIT)(copilot_inline_edit)
    server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(
        inline_completion
    )
    for name, (module, function) in COMMANDS.items():
        server.command(name)(_command(module, function))
    return server
