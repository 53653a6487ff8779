"""The model calls, over one pooled HTTP client: fill-in-the-middle in each server's own
format, and a chat prompt where there is none (the Anthropic API) or the server refuses it.

Each call is a stream read inside its `async with`: a cancelled call (a newer keystroke, a
`$/cancelRequest`) leaves it at once and the connection is closed, so the server stops
generating. No redirect is followed: the key goes to the URL the user chose and nowhere else.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx2

from ..models.capabilities import body_at_most
from ..models.providers import shown_url
from .route import Route
from .window import Window

REFUSED = frozenset({400, 404, 405, 501})
"""Answers that mean "no FIM here" (a route or parameter it lacks): the chat prompt follows."""
MAX_ANSWER = 1 << 20
"""Bytes of a model's answer read at most."""
ANSWER_SECONDS = 30.0
"""Seconds a model's whole answer may take: the read timeout bounds each pause only, and a
byte at a time would hold the call and its connection open for ever."""
CURSOR = "<|cursor|>"

_SYSTEM = (
    "You complete code at the cursor. The user's file follows, with the marker "
    f"{CURSOR} where the cursor stands. Answer with only the text to insert there, exactly as "
    "it would be typed: no explanation, no code fences, nothing that is already before or "
    "after the marker. Answer with nothing if nothing should be inserted."
)
_FENCE = re.compile(r"^\s*```[^\n]*\n(.*?)\n?```\s*$", re.DOTALL)


class ModelFailed(Exception):
    """The model's server failed or answered what is not an answer (said in the log)."""


class _Refused(Exception):
    pass


@dataclass(frozen=True)
class Answer:
    text: str
    seconds: float
    """The model's own time: from the request sent to its answer read."""


def without_fence(text: str) -> str:
    found = _FENCE.match(text)
    return found.group(1) if found else text


class ModelClient:
    """One HTTP client and connection pool for every completion."""

    def __init__(self) -> None:
        self._client: httpx2.AsyncClient | None = None

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(30, connect=5),
                follow_redirects=False,
                limits=httpx2.Limits(max_connections=16, max_keepalive_connections=4),
            )
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def fill(self, route: Route, window: Window, max_tokens: int) -> Answer:
        """The text for the cursor: FIM first, the chat prompt when there is no FIM."""
        fim = fim_body(route, window, max_tokens) if route.fim != "none" else None
        chat = chat_body(route, f"{window.prefix}{CURSOR}{window.suffix}", max_tokens)
        return await self._either(route, route.fim_url, fim, chat)

    async def rewrite(self, route: Route, prompt: str, max_tokens: int, stop: str) -> Answer:
        """The model's continuation of a raw prompt (Zeta's, which it was trained on), up to
        `stop`; through the chat route where there is no raw completion."""
        raw = raw_body(route, prompt, max_tokens, stop) if route.fim != "none" else None
        chat = chat_body(route, prompt, max_tokens, system=None)
        return await self._either(route, route.raw_url, raw, chat)

    async def _either(
        self, route: Route, url: str, body: dict[str, Any] | None, chat: dict[str, Any]
    ) -> Answer:
        """`body` posted to `url` in the route's own format, else (none, or refused) `chat`
        to its chat route, whose answer loses a code fence around it."""
        started = time.perf_counter()
        if body is not None:
            try:
                data = await self._post(url, route.headers(fim=True), body, True)
                return Answer(fim_text(route, data), time.perf_counter() - started)
            except _Refused:
                pass
        data = await self._post(route.chat_url, route.headers(fim=False), chat, False)
        return Answer(without_fence(chat_text(route, data)), time.perf_counter() - started)

    async def _post(self, url: str, headers: dict[str, str], body: Any, fim: bool) -> Any:
        try:
            exchange = self._exchange(url, headers, body, fim)
            return await asyncio.wait_for(exchange, ANSWER_SECONDS)
        except asyncio.TimeoutError:  # not yet the built-in TimeoutError on Python 3.10
            raise ModelFailed(
                f"{shown_url(url)} did not answer within {ANSWER_SECONDS:g} s"
            ) from None
        except httpx2.HTTPError as error:  # refused, timed out, cut off
            # Its message may hold the URL with a password in it: only its kind is told.
            raise ModelFailed(f"{shown_url(url)}: {type(error).__name__}") from None

    async def _exchange(self, url: str, headers: dict[str, str], body: Any, fim: bool) -> Any:
        async with self._http().stream("POST", url, headers=headers, json=body) as response:
            if fim and response.status_code in REFUSED:
                raise _Refused
            if response.status_code >= 400:
                raise ModelFailed(f"{shown_url(url)} answered HTTP {response.status_code}")
            data = await body_at_most(response, MAX_ANSWER)
            if data is None:
                raise ModelFailed(f"{shown_url(url)} answered more than {MAX_ANSWER} bytes")
        try:
            return json.loads(data)
        except ValueError as error:
            raise ModelFailed(f"{shown_url(url)} answered what is not JSON ({error})") from None


def fim_body(route: Route, window: Window, max_tokens: int) -> dict[str, Any]:
    if route.fim == "llamacpp":
        return {
            "input_prefix": window.prefix,
            "input_suffix": window.suffix,
            "n_predict": max_tokens,
            "stream": False,
        }
    if route.fim == "ollama":
        return {
            "model": route.model,
            "prompt": window.prefix,
            "suffix": window.suffix,
            "stream": False,
            "options": {"num_predict": max_tokens, "temperature": 0},
        }
    return {
        "model": route.model,
        "prompt": window.prefix,
        "suffix": window.suffix,
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": False,
    }


def raw_body(route: Route, prompt: str, max_tokens: int, stop: str) -> dict[str, Any]:
    if route.fim == "llamacpp":
        return {"prompt": prompt, "n_predict": max_tokens, "stop": [stop], "stream": False}
    if route.fim == "ollama":
        options = {"num_predict": max_tokens, "temperature": 0, "stop": [stop]}
        return {
            "model": route.model,
            "prompt": prompt,
            "raw": True,
            "stream": False,
            "options": options,
        }
    return {
        "model": route.model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": 0,
        "stop": [stop],
        "stream": False,
    }


def _field(data: Any, *path: str | int) -> str:
    for step in path:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            raise ModelFailed(f"the answer has no {'.'.join(map(str, path))}") from None
    if not isinstance(data, str):
        raise ModelFailed(f"the answer's {'.'.join(map(str, path))} is not text")
    return data


def fim_text(route: Route, data: Any) -> str:
    if route.fim == "llamacpp":
        return _field(data, "content")
    if route.fim == "ollama":
        return _field(data, "response")
    return _field(data, "choices", 0, "text")


def chat_body(
    route: Route, prompt: str, max_tokens: int, system: str | None = _SYSTEM
) -> dict[str, Any]:
    profile = route.endpoint.profile
    user = {"role": "user", "content": prompt}
    if profile.wire == "anthropic":
        body = {"model": route.model, "max_tokens": max_tokens, "messages": [user]}
        return body if system is None else {**body, "system": system}
    first = [] if system is None else [{"role": "system", "content": system}]
    return {"model": route.model, profile.max_tokens_field: max_tokens, "messages": [*first, user]}


def chat_text(route: Route, data: Any) -> str:
    if route.endpoint.profile.wire == "openai":
        return _field(data, "choices", 0, "message", "content")
    blocks = data.get("content") if isinstance(data, dict) else None
    if not isinstance(blocks, list):
        raise ModelFailed("the answer has no content")
    return "".join(
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )
