"""The editor as an MCP server's way to the user: a sign-in URL opened by the editor
(`window/showDocument`, external) and said in a message; a server's question as
`agent/elicit` to a client that declares it (`capabilities.experimental.agentls.elicit`),
declined with the reason to any other. docs/protocol.md defines the request."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from ..extensions.mcp_elicitation import field_list
from ..extensions.mcp_user import Answer
from ..visible import visible

ELICIT = "agent/elicit"


def client_answers_questions(server: LanguageServer) -> bool:
    experimental = server.client_capabilities.experimental
    ours = experimental.get("agentls") if isinstance(experimental, dict) else None
    return isinstance(ours, dict) and ours.get("elicit") is True


class LspMcpUser:
    def __init__(self, server: LanguageServer, asking: asyncio.Lock | None = None) -> None:
        self.server = server
        self.asking = asking or asyncio.Lock()
        """The approver's: one question at a time (a client shows one form at once)."""

    def open_url(self, server: str, url: str, why: str) -> None:
        self.server.window_show_message(
            types.ShowMessageParams(types.MessageType.Info, f"{why}: {url}")
        )
        # Not awaited: the sign-in waits for the redirect, not for the editor's answer, and
        # an editor that cannot open it has shown the message anyway.
        self.server.window_show_document(types.ShowDocumentParams(uri=url, external=True))

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        if not client_answers_questions(self.server):
            return Answer(
                "decline",
                reason=f"the MCP server {server} asked a question, but this editor cannot "
                "show it (it does not answer agent/elicit)",
            )
        params = {
            "server": server,
            "prompt": f"The MCP server {server} asks",
            "message": visible(message),
            "fields": field_list(schema),
        }
        try:
            async with self.asking:
                answer = await self.server.protocol.send_request_async(ELICIT, params)
        except JsonRpcException as error:
            return Answer("decline", reason=f"the editor could not ask: {error.message}")
        return _answer(answer)


def _answer(answer: Any) -> Answer:
    """The client's answer; null (dismissed) cancels, anything unknown declines."""
    if answer is None:
        return Answer("cancel")
    action = _field(answer, "action")
    if action == "accept":
        content = _field(answer, "content")
        if content is not None and not isinstance(content, dict):  # pygls's object for JSON
            content = content._asdict()  # a named tuple
        return Answer("accept", dict(content or {}))
    return Answer("cancel" if action == "cancel" else "decline")


def _field(answer: Any, key: str) -> Any:
    return answer.get(key) if isinstance(answer, dict) else getattr(answer, key, None)
