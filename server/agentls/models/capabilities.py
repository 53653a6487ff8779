"""What a local server says its model can do, asked before a task: a server whose chat
template cannot take tools drops them without a word (llama.cpp's server does), and the
model then never calls one, however plain the task. The profiles that can ask say so
(`Profile.capabilities`): llama.cpp's `GET /props`, Ollama's `POST /api/show`.

The answer is read within a bound and a short timeout; a server that cannot be asked is
not a warning (the task's own request says what is wrong with it).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from .providers import Endpoint

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger(__name__)

ASK_TIMEOUT = 5.0
"""Seconds for the whole question: a local server answers in milliseconds."""
MAX_ANSWER = 4 * 1024 * 1024
"""Bytes read of the answer at most (llama.cpp's /props carries its chat templates)."""


class NotAsked(Exception):
    """The server could not be asked, or its answer made no sense."""


async def warnings(endpoint: Endpoint, model: str, window: int | None) -> list[str]:
    """What the user should know before a task on this server, each one sentence or two:
    tools that will not reach the model, a context window smaller than agentls assumes
    (`window`: the contextWindow in effect). Raises NotAsked when the server could not say."""
    kind = endpoint.profile.capabilities
    if kind == "llamacpp":
        return _llamacpp(endpoint, await _ask(endpoint, "GET", "/props", None), window)
    if kind == "ollama":
        return _ollama(endpoint, model, await _ask(endpoint, "POST", "/api/show", {"model": model}))
    return []


def _llamacpp(endpoint: Endpoint, props: dict[str, Any], window: int | None) -> list[str]:
    said: list[str] = []
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict) and False in (
        caps.get("supports_tools"),
        caps.get("supports_tool_calls"),
    ):
        said.append(
            f"llama.cpp at {endpoint.shown_url} says its chat template takes no tools "
            "(GET /props: chat_template_caps): it drops them, and the model will never call "
            "one. Start llama-server with --jinja and a template that has tool calls "
            "(--chat-template-file, e.g. the ChatML one in llama.cpp's models/templates)."
        )
    settings = props.get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    if isinstance(n_ctx, int) and n_ctx > 0 and window is not None and window > n_ctx:
        said.append(
            f"llama.cpp at {endpoint.shown_url} has a context of {n_ctx:,} tokens, but "
            f"agentls assumes {window:,}: set agentls.contextWindow to {n_ctx}, so long "
            "tasks are shortened before the server refuses them."
        )
    return said


def _ollama(endpoint: Endpoint, model: str, shown: dict[str, Any]) -> list[str]:
    capabilities = shown.get("capabilities")
    if isinstance(capabilities, list) and "tools" not in capabilities:
        return [
            f"Ollama at {endpoint.shown_url} says {model} cannot take tools (POST /api/show: "
            f"capabilities {', '.join(map(str, capabilities)) or 'none'}): the model will "
            "never call one. Choose a model whose capabilities include tools."
        ]
    return []


async def _ask(
    endpoint: Endpoint, method: str, path: str, body: dict[str, Any] | None
) -> dict[str, Any]:
    import httpx2

    parts = urlsplit(endpoint.base_url)
    url = urlunsplit(parts._replace(path=parts.path.rstrip("/") + path, query="", fragment=""))
    headers = {"authorization": f"Bearer {endpoint.key}"} if endpoint.key else {}
    try:
        async with (
            httpx2.AsyncClient(timeout=ASK_TIMEOUT, follow_redirects=False) as client,
            client.stream(method, url, json=body, headers=headers) as response,
        ):
            if response.status_code != 200:
                raise NotAsked(f"{method} {path}: HTTP {response.status_code}")
            received = await body_at_most(response, MAX_ANSWER)
            if received is None:
                raise NotAsked(f"{method} {path}: an answer over {MAX_ANSWER:,} bytes")
    except httpx2.HTTPError as error:
        raise NotAsked(f"{method} {path}: {type(error).__name__}") from error
    try:
        answer = json.loads(received)
    except ValueError as error:
        raise NotAsked(f"{method} {path}: not JSON") from error
    if not isinstance(answer, dict):
        raise NotAsked(f"{method} {path}: not a JSON object")
    return answer


async def body_at_most(response: httpx2.Response, limit: int) -> bytes | None:
    """The response's body, read no further than `limit` bytes; None when it is longer."""
    received = bytearray()
    async for piece in response.aiter_bytes():
        received += piece
        if len(received) > limit:
            return None
    return bytes(received)


async def before_task(endpoint: Endpoint, model: str, window: int | None) -> list[str]:
    """`warnings`, or none when the server could not say (logged): its task will tell."""
    try:
        return await warnings(endpoint, model, window)
    except NotAsked as why:
        log.info("could not ask %s what it supports: %s", endpoint.shown_url, why)
        return []
