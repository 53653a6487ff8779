"""The editor's own language servers, asked through the client with agentls's requests
`agent/diagnostics`, `agent/definition`, `agent/references` and `agent/symbols`
(docs/protocol.md), each only of a client that advertises it."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from ..eyes.locations import line_of, path_of, place_of
from ..interfaces import Place, Problem
from .workspace import uri_of

log = logging.getLogger(__name__)

SETTLE_MS = 2000
"""Sent with each request as `settleMs`: how long the editor may wait for its language servers
(to catch up with a change, to attach to a file just opened, to answer) before it answers
with what it has. One figure for every client, so they wait alike."""
ANSWER_SECONDS = 5.0
"""How long an answer may take: the editor's own wait (`SETTLE_MS`) and the round trip."""
OPTIONAL = ("diagnostics", "definition", "references", "symbols")
"""The optional tools a client can serve, named as its capabilities name them."""
_SEVERITIES: dict[Any, Literal["error", "warning", "information", "hint"]] = {
    1: "error",
    2: "warning",
    3: "information",
    4: "hint",
}


def advertised(capabilities: types.ClientCapabilities, options: Any) -> frozenset[str]:
    """The optional tools the client says it serves: `capabilities.experimental.agentls`, or
    `initializationOptions.capabilities`, e.g. `{"diagnostics": true, "definition": true}`."""
    said: dict[str, Any] = {}
    experimental = capabilities.experimental
    if isinstance(experimental, dict) and isinstance(experimental.get("agentls"), dict):
        said.update(experimental["agentls"])
    if isinstance(options, dict) and isinstance(options.get("capabilities"), dict):
        said.update(options["capabilities"])
    return frozenset(name for name in OPTIONAL if said.get(name) is True)


def _plain(value: Any) -> Any:
    """A JSON value as plain dicts and lists: pygls gives the result of a request it has no
    type for as namedtuples."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _list(value: Any) -> list[Any] | None:
    """A JSON array; an empty object too, as Lua's encoder writes an empty table."""
    if isinstance(value, list):
        return value
    return [] if value == {} else None


def _problem(path: Path, diagnostic: Any) -> Problem | None:
    """An LSP Diagnostic as a Problem; None for one that is malformed."""
    if not isinstance(diagnostic, dict) or not isinstance(diagnostic.get("message"), str):
        return None
    line = line_of(diagnostic.get("range"))
    source = diagnostic.get("source")
    severity = _SEVERITIES.get(diagnostic.get("severity", 1), "error")
    if line is None:
        return None
    return Problem(
        path, line, severity, diagnostic["message"], source if isinstance(source, str) else ""
    )


def _kind(value: Any) -> str:
    try:
        return types.SymbolKind(value).name.lower()
    except ValueError:
        return "symbol"


class ClientLanguageServers:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server

    async def _ask(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        asked = {**params, "settleMs": SETTLE_MS}
        pending = self.server.protocol.send_request_async(method, asked)
        try:
            # Shielded: a late answer must still find its future.
            answer = await asyncio.wait_for(asyncio.shield(pending), ANSWER_SECONDS)
        except (asyncio.TimeoutError, JsonRpcException) as error:
            log.warning("%s got no answer: %s", method, error or "timed out")
            return None
        answer = _plain(answer)
        return answer if isinstance(answer, dict) else None

    async def _ask_list(self, method: str, params: dict[str, Any], key: str) -> list[Any] | None:
        """The list the answer holds under `key`; None without an answer."""
        answer = await self._ask(method, params)
        return None if answer is None else _list(answer.get(key))

    async def problems(self, paths: list[Path] | None) -> dict[Path, list[Problem]] | None:
        uris = [uri_of(path) for path in paths] if paths is not None else []
        items = await self._ask_list("agent/diagnostics", {"uris": uris}, "items")
        if items is None:
            return None
        problems: dict[Path, list[Problem]] = {}
        for item in items:
            path = path_of(item.get("uri")) if isinstance(item, dict) else None
            if path is not None:
                found = (_problem(path, d) for d in _list(item.get("diagnostics")) or [])
                problems.setdefault(path, []).extend(p for p in found if p is not None)
        return problems

    async def places(
        self, kind: Literal["definition", "references"], path: Path, line: int, before: str
    ) -> list[Place] | None:
        character = self.server.workspace.position_codec.client_num_units(before)
        params = {
            "textDocument": {"uri": uri_of(path)},
            "position": {"line": line - 1, "character": character},
        }
        locations = await self._ask_list(f"agent/{kind}", params, "locations")
        if locations is None:
            return None
        return [p for p in map(place_of, locations) if p is not None]

    async def symbols(self, query: str) -> list[Place] | None:
        symbols = await self._ask_list("agent/symbols", {"query": query}, "symbols")
        if symbols is None:
            return None
        places = []
        for symbol in symbols:
            if isinstance(symbol, dict) and isinstance(symbol.get("name"), str):
                name = f"{_kind(symbol.get('kind'))} {symbol['name']}"
                place = place_of(symbol.get("location"), name)
                if place is not None:
                    places.append(place)
        return places
