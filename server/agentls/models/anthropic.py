"""The model: the retries and error messages every adapter shares, and Claude (or any server
speaking the Anthropic Messages API) through the official anthropic SDK, streamed and cached.

The SDKs are imported on first use, not at start-up: they are the heaviest imports we have,
and an editor waits for `initialize` before anything else.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import logging
import os
import re
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..interfaces import SAID, Block, Messages, ModelError, OnText, PromptTooLong, Schemas, Turn
from ..redaction import redact, secret_values
from .message_stream import MessageAnswer, ServerError
from .providers import DEFAULT_PROVIDER, KEYLESS, PROFILES, Endpoint

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import MessageParam, TextBlockParam, ToolParam

log = logging.getLogger(__name__)

MAX_RETRIES = 4
"""Retries of a request that failed with 408, 409, 429, 5xx or 529, or lost its connection;
the SDK waits between them with exponential backoff (0.5 s to 8 s) or as `retry-after` says."""

STREAM_RETRIES = 2
"""Further attempts at an answer that broke off after it began (the connection dropped, the
stream ended early, the tool input was not JSON, the API was overloaded): the SDK retries
only failed requests. Not a silence past the timeout, nor a server's own error: the same
request meets them again."""

MIN_ANSWER = 1000
"""The smallest answer limit the room left in the context window brings maxTokens down to
(the setting's own minimum)."""

_CACHE = {"type": "ephemeral"}
WEB_SEARCH: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
"""Anthropic's server tool: the API searches and answers with results and cited text; after
our own tools, so the tools' part of the cached prefix is the same with it or without."""
_MESSAGE_BREAKPOINTS = (-1, -3)
"""The newest message, and the one that was newest at the previous request (each step adds an
assistant turn and a user turn): the second is an exact cache hit however many blocks the
step added, where the API's look-back from the first reaches only 20 blocks. With the system
prompt's, 3 breakpoints of the API's 4."""


def sdk_of(provider: str | None) -> str:
    """The module of the provider's SDK. `provider`: the provider setting, if any."""
    profile = PROFILES.get(provider or os.environ.get("AGENTLS_PROVIDER") or DEFAULT_PROVIDER)
    return profile.wire if profile else DEFAULT_PROVIDER  # a wire format is named after its SDK


async def load_sdk(provider: str | None) -> None:
    """Import the provider's SDK in a thread, before a task needs it: the editor goes on
    being served meanwhile, and a server that never runs a task never holds it (the
    anthropic SDK alone is some 50 MiB). `provider`: the provider setting, if any."""
    sdk = sdk_of(provider)
    if sdk not in sys.modules:
        await asyncio.to_thread(importlib.import_module, sdk)


class ClientCache:
    """One SDK client per endpoint and key, reused by every task to keep its connections warm."""

    def __init__(self) -> None:
        self._clients: dict[tuple[str, str, str | None, str], Any] = {}

    def get(self, endpoint: Endpoint) -> Any:
        """The endpoint's client: an AsyncAnthropic or an AsyncOpenAI, by its wire format."""
        signature = endpoint.signature
        if signature not in self._clients:
            self._clients[signature] = _client(endpoint)
        return self._clients[signature]

    async def close(self) -> None:
        """Close every client's connections, in the loop that opened them (a server run in a
        test's process; a server process ends without it)."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()


def _client(endpoint: Endpoint) -> Any:
    # Every argument is given, so neither SDK reads a key or an endpoint from the process
    # environment behind providers.endpoint's back.
    key = endpoint.key or KEYLESS
    # Nothing listens there, or no such host: retrying only makes the user wait 10 s for the
    # same answer, so both clients fail fast on it.
    if endpoint.profile.wire == "openai":
        from openai import APIConnectionError, AsyncOpenAI

        class FailingFastChat(AsyncOpenAI):
            async def _send_request(self, request: Any, **arguments: Any) -> Any:
                try:
                    return await super()._send_request(request, **arguments)
                except Exception as error:
                    if unreachable(error) is None:
                        raise
                    # The SDK raises its own errors as they are, without a retry.
                    raise APIConnectionError(request=request) from error

        return FailingFastChat(api_key=key, base_url=endpoint.base_url, max_retries=MAX_RETRIES)
    from anthropic import AsyncAnthropic

    class FailingFast(AsyncAnthropic):
        def _should_retry_exception(self, err: BaseException) -> Any:
            if unreachable(err) is not None:
                return False, None
            return super()._should_retry_exception(err)

    bearer = endpoint.auth == "bearer"
    return FailingFast(
        api_key=None if bearer else key,
        auth_token=key if bearer else None,
        base_url=endpoint.base_url,
        max_retries=MAX_RETRIES,
    )


def unreachable(error: BaseException) -> str | None:
    """Why the endpoint cannot be reached at all, when that is what `error` comes from."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "refused"
        if isinstance(current, socket.gaierror):
            return "no such host"
        current = current.__cause__ or current.__context__
    return None


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


def sendable(message: dict[str, Any]) -> dict[str, Any]:
    """`message` as the API takes it: the same object unless a block carries agentls's
    `SAID` mark, which the API would refuse as an extra field."""
    content = message["content"]
    if not isinstance(content, list) or not any(SAID in block for block in content):
        return message
    return {**message, "content": [{k: v for k, v in b.items() if k != SAID} for b in content]}


_TOO_LONG = re.compile(
    # Anthropic; OpenAI and vLLM; llama.cpp; other OpenAI-compatible servers.
    r"prompt is too long(?:: (\d+) tokens)?"
    r"|maximum context length is \d+ tokens\. However, (?:your messages resulted in|you "
    r"requested) (\d+) tokens"
    r"|exceeds? (?:the )?(?:available )?context (?:size|length|window)"
    r"|context_length_exceeded",
    re.IGNORECASE,
)


def _prompt_tokens(match: re.Match[str]) -> int | None:
    told = match.group(1) or match.group(2)
    return int(told) if told else None


def _what_the_api_said(error: Any) -> str:
    """The error's own message: the SDKs' `message` wraps it as "Error code: 400 - {...}",
    the whole body as a Python dict for Anthropic's."""
    body = error.body
    said = body.get("error", body) if isinstance(body, dict) else None
    message = said.get("message") if isinstance(said, dict) else None
    return message if isinstance(message, str) and message else str(error.message)


class Failure:
    """Turns an SDK's exception into the user's message: both SDKs share one exception
    hierarchy (AuthenticationError, RateLimitError, APIStatusError, ...) by name."""

    def __init__(
        self,
        sdk: ModuleType,
        model: str,
        endpoint: Endpoint,
        env: Mapping[str, str],
        timeout: float,
    ):
        self.sdk = sdk
        self.model = model
        self.endpoint = endpoint
        self.env = env
        self.timeout = timeout

    def __call__(self, error: Exception, broken: bool = False) -> ModelError:
        """`broken`: the error came after the answer began (the SDK's connection errors
        included), so the server was reached."""
        sdk, profile = self.sdk, self.endpoint.profile
        where = (
            f"the {profile.title} API"
            if self.endpoint.base_url == profile.base_url
            else self.endpoint.shown_url
        )
        api_error = isinstance(error, sdk.APIError)
        too_long = _TOO_LONG.search(str(getattr(error, "message", ""))) if api_error else None
        if too_long or (api_error and getattr(error, "code", None) == "context_length_exceeded"):
            return PromptTooLong(
                "The conversation is longer than the model's context window.",
                "Compact the conversation or start a new one (in an editor: agent.compact, "
                "agent.newSession; in the terminal: a new `agentls run`).",
                _prompt_tokens(too_long) if too_long else None,
            )
        if isinstance(error, ServerError):
            message = f"{where} failed during its answer: {error}"
            hint = "The server's log may say more; run the task again."
        elif timed_out(error):
            message, hint = self._silence(where, broken)
        elif broken and not isinstance(error, sdk.APIStatusError):
            message = f"The answer from {where} broke off: {type(error).__name__}: {error}"
            hint = "Run the task again."
        elif isinstance(error, sdk.AuthenticationError):
            message, hint = "The API key was refused (401).", profile.key_hint
        elif isinstance(error, sdk.PermissionDeniedError):
            message = "The API key may not use this model (403)."
            hint = "Check the key's workspace."
        elif isinstance(error, sdk.NotFoundError):
            message = f"The model {self.model!r} was not found (404)."
            hint = "Check the agentls.model setting or AGENTLS_MODEL."
        elif isinstance(error, sdk.RateLimitError):
            message = f"Still rate limited after {MAX_RETRIES} retries (429)."
            hint = "Wait a minute and run the task again."
        elif isinstance(error, sdk.APIStatusError) and error.status_code >= 500:
            message = f"The API failed after {MAX_RETRIES} retries ({error.status_code})."
            hint = "The service may be overloaded; run the task again later."
        elif isinstance(error, sdk.APIConnectionError) and unreachable(error) == "refused":
            message = f"Could not reach {where}: nothing accepts connections there."
            hint = f"Start the server it names, or correct {self.endpoint.url_source}."
        elif isinstance(error, sdk.APIConnectionError) and unreachable(error):
            message = f"Could not reach {where}: its host name is not known."
            hint = (
                f"Correct the host in {self.endpoint.url_source}, or check the network's name "
                "service."
            )
        elif isinstance(error, sdk.APIConnectionError):
            message = f"Could not reach {where}."
            hint = "Check the network, the server, or the agentls.baseUrl setting."
        elif isinstance(error, sdk.APIStatusError):
            said = _what_the_api_said(error)
            message = f"The API refused the request ({error.status_code}): {said}"
            hint = "Check the agentls settings, or start a new conversation."
        else:
            message = f"The answer from {where} broke off: {type(error).__name__}: {error}"
            hint = "Run the task again."
        # A password in a baseUrl setting is the user's secret too, though no variable holds it.
        url = {"baseUrl": self.endpoint.base_url}
        message = redact(message, secret_values(self.env) + secret_values(url))
        # Info, not warning: the front end shows the error itself, and `agentls run` would print
        # Python's default warning to the terminal as well.
        log.info("model call failed: %s", message)
        return ModelError(message, hint)

    def _silence(self, where: str, broken: bool) -> tuple[str, str]:
        waited = f"{self.timeout:g} s (the agentls.requestTimeout setting)"
        if broken:  # the server holds back what it cannot yet parse, or is stuck
            message = f"{where} sent nothing more for {waited} in the middle of its answer."
        else:
            message = f"{where} did not answer within {waited}, {MAX_RETRIES} retries included."
        hint = (
            "A local model may need longer for a long prompt: raise agentls.requestTimeout, "
            "or check the server and its log."
        )
        return message, hint


def timed_out(error: BaseException) -> bool:
    """Whether `error` comes from a read that waited longer than the timeout (both SDKs
    raise their APITimeoutError from the transport's own)."""
    import httpx2

    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, httpx2.TimeoutException):
            return True
        current = current.__cause__ or current.__context__
    return False


def worth_asking_again(broken: BrokenAnswer) -> bool:
    """A dropped connection or a stream that ended early may go better next time; a silence
    past the timeout or an error the server reported itself comes back the same."""
    cause = broken.cause
    if isinstance(cause, ServerError):
        return cause.transient
    return not timed_out(cause)


class BrokenAnswer(Exception):
    """The request was answered, but the answer stopped before its end or could not be read."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


RETRYING = "The answer broke off; asking again."


async def with_retries(
    ask: Callable[[], Awaitable[Turn]],
    on_notice: Callable[[str], None],
    failure: Failure,
) -> Turn:
    """`ask()` again when its answer broke off, saying so to `on_notice` (never as the
    model's text); every failure as a ModelError.

    Errors opening a stream were already retried by the SDK; those after it opened (a
    dropped connection, tool input that is not JSON) raise BrokenAnswer and are ours.
    """
    for attempt in range(STREAM_RETRIES + 1):
        try:
            return await ask()
        except BrokenAnswer as broken:
            cause = broken.cause
            if attempt == STREAM_RETRIES or not worth_asking_again(broken):
                raise failure(cause, True) from cause
            log.warning("the answer broke off (%s); asking again", cause)
            on_notice(RETRYING)
            await asyncio.sleep(0.5 * 2**attempt)
        except Exception as error:
            raise failure(error) from error
    raise AssertionError("unreachable")


def anthropic_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as the Messages API takes it, whatever the server: without agentls's own
    marks (`sendable`), nor the reasoning another format's model left in it (a session may
    change provider between tasks). Only changed messages are copies."""
    sent = [sendable(message) for message in messages]
    if not any(b.get("type") == "reasoning" for m in sent for b in m["content"]):
        return sent
    cleaned = []
    for message in sent:
        content = [b for b in message["content"] if b.get("type") != "reasoning"]
        cleaned.append({**message, "content": content or [{"type": "text", "text": "(empty)"}]})
    return cleaned


_Adapter = TypeVar("_Adapter", bound="Adapter")


class Adapter:
    """What every wire format's model holds: its SDK client, the model id, its limits, the
    endpoint, and the environment whose secrets its messages must not show."""

    web_search = False
    """Offer the provider's own web search (the `webSearch` setting), where it has one."""

    def __init__(
        self,
        client: Any,
        name: str,
        max_tokens: int,
        endpoint: Endpoint,
        env: Mapping[str, str],
        timeout: float,
    ) -> None:
        self.client = client
        self.name = name
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.endpoint = endpoint
        self._env = env

    def renamed(self: _Adapter, name: str) -> _Adapter:
        """The same endpoint, limits and web search for another model id (a subagent's)."""
        renamed = type(self)(
            self.client, name, self.max_tokens, self.endpoint, self._env, self.timeout
        )
        renamed.web_search = self.web_search
        return renamed

    def answer_limit(self, room: int | None) -> int:
        """The answer's token limit: the maxTokens setting, within the `room` the context
        window has left for it when the caller knows it, but never below the setting's own
        floor (a window that full is the prompt's problem, which the server will say)."""
        return self.max_tokens if room is None else min(self.max_tokens, max(room, MIN_ANSWER))


def logged(notice: str) -> None:
    """A notice nobody asked to see: the log's."""
    log.info("%s", notice)


class AnthropicModel(Adapter):
    client: AsyncAnthropic

    async def respond(
        self,
        system: str,
        messages: Messages,
        tools: Schemas,
        on_text: OnText,
        *,
        on_notice: OnText | None = None,
        max_tokens: int | None = None,
    ) -> Turn:
        import anthropic

        messages = anthropic_blocks(messages)
        if self.web_search:
            tools = [*tools, WEB_SEARCH]
        if self.endpoint.profile.cache_markers:
            system_blocks, messages = with_cache_breakpoints(system, messages)
        else:
            system_blocks = [{"type": "text", "text": system}]
        limit = self.answer_limit(max_tokens)
        return await with_retries(
            lambda: self._stream(system_blocks, messages, tools, on_text, limit),
            on_notice or logged,
            Failure(anthropic, self.name, self.endpoint, self._env, self.timeout),
        )

    async def _stream(
        self,
        system: list[Block],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        max_tokens: int,
    ) -> Turn:
        # The loop builds the API's JSON without importing the SDK (interfaces.Block); this
        # is the one place it meets the SDK, whose TypedDicts describe that same JSON. The
        # body's lines, not `messages.stream` or its typed events: see message_stream.
        answer = MessageAnswer(on_text)
        async with self.client.messages.with_streaming_response.create(
            model=self.name,
            max_tokens=max_tokens,
            system=cast("list[TextBlockParam]", system),
            messages=cast("list[MessageParam]", messages),
            tools=cast("list[ToolParam]", tools),
            timeout=self.timeout,
            stream=True,
        ) as response:
            try:
                async for line in response.iter_lines():
                    answer.add_line(line)
                answer.add_line("")  # a last event without its blank line
                return answer.turn()
            except Exception as error:
                raise BrokenAnswer(error) from error
