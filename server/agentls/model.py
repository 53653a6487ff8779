"""The model: Claude through the official anthropic SDK, streamed, retried and cached.

The SDK is imported on first use, not at start-up: it is the heaviest import we have, and an
editor waits for `initialize` before anything else.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .environment import redact, secret_values
from .interfaces import Block, ModelError, PromptTooLong, Turn, Usage

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import MessageParam, TextBlockParam, ToolParam

log = logging.getLogger(__name__)

MAX_RETRIES = 4
"""Retries of a request that failed with 408, 409, 429, 5xx or 529, or lost its connection;
the SDK waits between them with exponential backoff (0.5 s to 8 s) or as `retry-after` says."""

STREAM_RETRIES = 2
"""Further attempts at an answer that broke off after it began (the connection dropped, the
stream ended early, the tool input was not JSON): the SDK retries only failed requests."""

KEY_HINT = (
    "Set ANTHROPIC_API_KEY in the environment or in ~/.config/agentls/.env (a workspace's "
    ".env belongs to the repository and never configures the model client)."
)

_CACHE = {"type": "ephemeral"}
_MESSAGE_BREAKPOINTS = (-1, -3)
"""The newest message, and the one that was newest at the previous request (each step adds an
assistant turn and a user turn): the second is an exact cache hit however many blocks the
step added, where the API's look-back from the first reaches only 20 blocks. With the system
prompt's, 3 breakpoints of the API's 4."""


def preload() -> None:
    """Import the SDK in the background, so the first task does not wait seconds for it."""
    threading.Thread(
        target=lambda: __import__("anthropic"), name="import-anthropic", daemon=True
    ).start()


class ClientCache:
    """One SDK client per key and endpoint, reused by every task to keep its connections warm."""

    def __init__(self) -> None:
        self._clients: dict[tuple[str | None, str | None, str | None], AsyncAnthropic] = {}

    def get(self, env: Mapping[str, str]) -> AsyncAnthropic:
        key = env.get("ANTHROPIC_API_KEY") or None
        token = None if key else env.get("ANTHROPIC_AUTH_TOKEN") or None
        base_url = env.get("ANTHROPIC_BASE_URL") or None
        if key is None and token is None:
            raise ModelError("No Anthropic API key is set.", KEY_HINT)
        signature = (key, token, base_url)
        if signature not in self._clients:
            from anthropic import AsyncAnthropic

            self._clients[signature] = AsyncAnthropic(
                api_key=key, auth_token=token, base_url=base_url, max_retries=MAX_RETRIES
            )
        return self._clients[signature]


def with_cache_breakpoints(
    system: str, messages: list[dict[str, Any]]
) -> tuple[list[Block], list[dict[str, Any]]]:
    """The request's system blocks and messages marked for prompt caching.

    The tools and the system prompt form a stable prefix (one breakpoint after the system
    prompt covers both); the newest message and the one that was newest a step ago carry
    moving breakpoints, so each step reads the previous steps from the cache instead of paying
    for them again. The history itself is left unmarked: only copies of the marked messages
    are made.
    """
    system_blocks: list[Block] = [{"type": "text", "text": system, "cache_control": _CACHE}]
    marked = list(messages)
    for index in {len(marked) + i for i in _MESSAGE_BREAKPOINTS if len(marked) + i >= 0}:
        message = copy.copy(marked[index])
        content = list(message["content"])
        if not content:
            continue
        content[-1] = {**content[-1], "cache_control": _CACHE}
        message["content"] = content
        marked[index] = message
    return system_blocks, marked


def _block(block: Any) -> Block:
    """A response block as request-ready JSON (no None fields the API would refuse back)."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    dumped: Block = block.model_dump(exclude_none=True)
    return dumped


def _usage(usage: Any) -> Usage:
    return Usage(
        input=usage.input_tokens or 0,
        output=usage.output_tokens or 0,
        cache_read=getattr(usage, "cache_read_input_tokens", None) or 0,
        cache_write=getattr(usage, "cache_creation_input_tokens", None) or 0,
    )


_TOO_LONG = re.compile(r"prompt is too long(?:: (\d+) tokens)?")


def _model_error(error: Exception, model: str, env: Mapping[str, str]) -> ModelError:
    import anthropic

    endpoint = env.get("ANTHROPIC_BASE_URL") or "the Anthropic API"
    too_long = _TOO_LONG.search(error.message) if isinstance(error, anthropic.APIError) else None
    if too_long:
        return PromptTooLong(
            "The conversation is longer than the model's context window.",
            "Compact the conversation (agent.compact) or start a new session (agent.newSession).",
            int(too_long.group(1)) if too_long.group(1) else None,
        )
    if isinstance(error, anthropic.AuthenticationError):
        message, hint = "The API key was refused (401).", KEY_HINT
    elif isinstance(error, anthropic.PermissionDeniedError):
        message, hint = "The API key may not use this model (403).", "Check the key's workspace."
    elif isinstance(error, anthropic.NotFoundError):
        message = f"The model {model!r} was not found (404)."
        hint = "Check the agentls.model setting or AGENTLS_MODEL."
    elif isinstance(error, anthropic.RateLimitError):
        message = f"Still rate limited after {MAX_RETRIES} retries (429)."
        hint = "Wait a minute and run the task again."
    elif isinstance(error, anthropic.APIStatusError) and error.status_code >= 500:
        message = f"The API failed after {MAX_RETRIES} retries ({error.status_code})."
        hint = "The service may be overloaded; run the task again later."
    elif isinstance(error, anthropic.APITimeoutError):
        message = f"{endpoint} did not answer in time, {MAX_RETRIES} retries included."
        hint = "Check the connection, or raise the agentls.requestTimeout setting."
    elif isinstance(error, anthropic.APIConnectionError):
        message = f"Could not reach {endpoint}."
        hint = "Check the network, or ANTHROPIC_BASE_URL if you set it."
    elif isinstance(error, anthropic.APIStatusError):
        message = f"The API refused the request ({error.status_code}): {error.message}"
        hint = "Check the agentls settings, or start a new session (agent.newSession)."
    else:
        message = f"The answer from {endpoint} broke off: {type(error).__name__}: {error}"
        hint = "Run the task again."
    message = redact(message, secret_values(env))
    log.warning("model call failed: %s", message)
    return ModelError(message, hint)


class _BrokenAnswer(Exception):
    """The request was answered, but the answer stopped before its end or could not be read."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


_RETRYING = "\n\n(The answer broke off; asking again.)\n\n"


class AnthropicModel:
    def __init__(
        self,
        client: AsyncAnthropic,
        name: str,
        max_tokens: int,
        env: Mapping[str, str],
        timeout: float,
    ) -> None:
        self.client = client
        self.name = name
        self.max_tokens = max_tokens
        self.timeout = timeout
        self._env = env

    async def respond(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
    ) -> Turn:
        system_blocks, marked = with_cache_breakpoints(system, messages)
        for attempt in range(STREAM_RETRIES + 1):
            try:
                return await self._stream(system_blocks, marked, tools, on_text)
            except _BrokenAnswer as broken:
                cause = broken.cause
                if attempt == STREAM_RETRIES:
                    raise _model_error(cause, self.name, self._env) from cause
                log.warning("the answer broke off (%s); asking again", cause)
                on_text(_RETRYING)
                await asyncio.sleep(0.5 * 2**attempt)
            except Exception as error:
                raise _model_error(error, self.name, self._env) from error
        raise AssertionError("unreachable")

    async def _stream(
        self,
        system: list[Block],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
    ) -> Turn:
        # Errors opening the stream were already retried by the SDK; errors after it opened
        # (a dropped connection, input JSON the SDK cannot parse) are ours to retry.
        # The loop builds the API's JSON without importing the SDK (interfaces.Block); this
        # is the one place it meets the SDK, whose TypedDicts describe that same JSON.
        async with self.client.messages.stream(
            model=self.name,
            max_tokens=self.max_tokens,
            system=cast("list[TextBlockParam]", system),
            messages=cast("list[MessageParam]", messages),
            tools=cast("list[ToolParam]", tools),
            timeout=self.timeout,
        ) as stream:
            try:
                async for text in stream.text_stream:
                    on_text(text)
                message = await stream.get_final_message()
            except Exception as error:
                raise _BrokenAnswer(error) from error
        if message.stop_reason is None:
            ended = ConnectionError("the stream ended before the answer did")
            raise _BrokenAnswer(ended) from ended
        return Turn(
            [_block(b) for b in message.content], message.stop_reason, _usage(message.usage)
        )
