"""Plain chat with the model a task would use (`agent.chat`), and which model that is
(`agent.model`): for an editor's own chat view, where agentls is the language model.

The model, its endpoint and its key are chosen exactly as for a task (`wiring.prepare_task`),
and the conversation carries no tools: agentls's tools belong to its tasks.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .. import redaction
from ..interfaces import ModelError
from ..wiring import prepare_task
from .agent_server import REQUEST_FAILED, AgentServer
from .progress import TEXT
from .protocol import command_params

SYSTEM = (
    "You are agentls, a coding assistant answering in the user's editor. Answer concisely, in "
    "Markdown. You cannot read or change files here; for work on the code, the user runs a "
    "task with @agentls."
)

ROLES = ("user", "assistant")


def _messages(arguments: tuple[Any, ...], secrets: tuple[str, ...]) -> list[dict[str, Any]]:
    """The conversation as the Messages API wants it: starting with the user, roles
    alternating (consecutive messages of one role joined), no secret in any of it."""
    usage = 'agent.chat takes {"messages": [{"role": "user" | "assistant", "text": "..."}]}'
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise JsonRpcInvalidParams(usage)
    given = arguments[0].get("messages")
    if not isinstance(given, list) or not all(
        isinstance(m, dict) and m.get("role") in ROLES and isinstance(m.get("text"), str)
        for m in given
    ):
        raise JsonRpcInvalidParams(usage)
    messages: list[dict[str, Any]] = []
    for message in given:
        text = redaction.redact(message["text"], secrets)
        if not text.strip():
            continue
        if messages and messages[-1]["role"] == message["role"]:
            messages[-1]["content"][0]["text"] += "\n\n" + text
        elif messages or message["role"] == "user":
            messages.append({"role": message["role"], "content": [{"type": "text", "text": text}]})
    if not messages or messages[-1]["role"] != "user":
        raise JsonRpcInvalidParams("agent.chat needs the user's message last")
    return messages


async def chat(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    """Streams the model's answer as `agent/text` with the request's workDoneToken, and
    answers with the whole text. `$/cancelRequest` stops it."""
    params = command_params.get()
    token = params.work_done_token if params is not None else None
    root = ls.root()
    settings = await ls.settings()
    try:
        setup = prepare_task(root, settings, ls.clients)
    except ModelError as error:
        raise JsonRpcException(f"{error} {error.hint}", REQUEST_FAILED) from None
    messages = _messages(arguments, setup.secrets)

    def streamed(delta: str) -> None:
        ls.protocol.notify(TEXT, {"token": token, "text": delta})

    def noticed(notice: str) -> None:  # a chat view has only the text to say it in
        streamed(f"\n\n({notice})\n\n")

    request_id = ls.protocol.msg_id
    asked = setup.model.respond(SYSTEM, messages, [], streamed, on_notice=noticed)
    job = asyncio.ensure_future(asked)
    ls.chats[request_id] = job
    try:
        turn = await job
    except asyncio.CancelledError:
        if not job.cancelled():
            raise
        return {"status": "cancelled", "text": ""}
    except ModelError as error:
        raise JsonRpcException(f"{error} {error.hint}".strip(), REQUEST_FAILED) from None
    finally:
        ls.chats.pop(request_id, None)
    text = "".join(block["text"] for block in turn.content if block.get("type") == "text")
    return {"status": "done", "text": text, "model": setup.model.name}


async def model(ls: AgentServer, *arguments: Any) -> dict[str, Any]:
    """The model tasks and chats use, as the settings and environment choose it now; with
    `error` (what to set) when there is none to use."""
    settings = await ls.settings()
    try:
        setup = prepare_task(ls.root(), settings, ls.clients)
    except ModelError as error:
        return {"error": f"{error} {error.hint}"}
    profile = setup.model.endpoint.profile
    return {
        "id": setup.model.name,
        "provider": profile.name,
        "providerTitle": profile.title,
        "contextWindow": setup.settings.context_window,
        "maxOutputTokens": setup.settings.max_tokens,
    }
