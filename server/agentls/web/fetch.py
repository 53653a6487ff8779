"""Fetching one URL from the server process, through the guard only.

A fresh client per fetch, made of nothing of the user's: no cookies, no `.netrc`, no proxy
or certificate bundle from the environment (`trust_env=False`), no key; its only headers are
ours. Redirects are followed here, not by the client, so each one is checked as the first
URL was (the scheme, the host's permission) before its connection, which the guard checks
in turn. Nothing here asks the user: `permit` does, for each new host.

A fetch has one deadline, whatever the page does: names looked up, connections, redirects
and the body together (httpx's timeout is per read: a byte every few seconds would hold it
for ever). The time the user takes to answer a question is not counted. A body the deadline
cuts comes back as far as it came, said so (`Fetched.late`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from .guard import GuardedBackend, Refused, checked_addresses

if TYPE_CHECKING:  # imported on first use: an editor waits for the server's start
    import httpx2

MAX_REDIRECTS = 5
MAX_BODY = 10 * 1024 * 1024
"""Bytes read of a response at most; the rest is never downloaded."""
DEADLINE = 30.0
"""Seconds a whole fetch may take by default (the `webFetch.timeout` setting)."""
USER_AGENT = "agentls-web_fetch (+https://github.com/agentls/agentls)"

Permit = Callable[[str, str], Awaitable[None]]
"""Awaited with (host, url) before the first connection to each host; raises to refuse."""


@dataclass(frozen=True, kw_only=True)
class Fetched:
    url: str
    """Where the page was found, after redirects."""
    status: int
    content_type: str
    """The media type alone, lower-cased (`text/html`)."""
    charset: str | None
    body: bytes
    truncated: bool
    """The body was longer than MAX_BODY, and was cut there."""
    late: bool = False
    """The deadline came while the body was read: it is what came before."""


class _Clock:
    """A fetch's deadline, on the event loop's clock, moved on by the time spent waiting
    for the user (`paused`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = asyncio.get_running_loop().time() + seconds

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        started = asyncio.get_running_loop().time()
        try:
            yield
        finally:
            self.end += asyncio.get_running_loop().time() - started

    def left(self) -> float:
        return max(0.0, self.end - asyncio.get_running_loop().time())

    def late(self) -> TimeoutError:
        return TimeoutError(
            f"no answer within web_fetch's {self.seconds:g}-second deadline (the "
            "webFetch.timeout setting; redirects included)"
        )


def checked_url(url: str) -> tuple[str, str]:
    """`url` and its host, when it is one web_fetch may ask for; Refused otherwise."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise Refused(f"web_fetch fetches http and https URLs only, not {parts.scheme or url!r}")
    if not parts.hostname:
        raise Refused(f"{url} names no host")
    if parts.username is not None or parts.password is not None:
        raise Refused("web_fetch sends no credentials: give the URL without user:password@")
    return url.strip(), parts.hostname.lower().rstrip(".")


def _transport(
    allow_hosts: Iterable[str], backend: GuardedBackend | None
) -> httpx2.AsyncBaseTransport:
    """httpx's transport with its connection pool built on the guarded backend."""
    import httpcore2
    import httpx2

    class GuardedTransport(httpx2.AsyncHTTPTransport):
        def __init__(self) -> None:
            super().__init__(trust_env=False, retries=0)
            # The pool httpx builds has no hook for the backend: ours replaces it, built with
            # httpx's own TLS settings (certificates checked, nothing from the environment).
            self._pool = httpcore2.AsyncConnectionPool(
                ssl_context=httpx2.create_ssl_context(trust_env=False),
                max_connections=4,
                retries=0,
                network_backend=backend or GuardedBackend(allow_hosts),
            )

    return GuardedTransport()


async def fetch(
    url: str,
    allow_hosts: Iterable[str],
    permit: Permit,
    backend: GuardedBackend | None = None,
    deadline: float = DEADLINE,
) -> Fetched:
    """GET `url`, following up to MAX_REDIRECTS redirects, within `deadline` seconds in all;
    Refused for what the guard or the scheme refuses, OSError-like httpx errors for a
    failed connection, TimeoutError when not even the headers came in time."""
    import httpx2

    url, host = checked_url(url)
    permitted: set[str] = set()
    clock = _Clock(deadline)
    transport = _transport(allow_hosts, backend)
    headers = {"User-Agent": USER_AGENT, "Accept": "text/html, text/markdown, text/plain, */*"}
    async with httpx2.AsyncClient(
        transport=transport,
        trust_env=False,
        follow_redirects=False,
        timeout=deadline,
        headers=headers,
    ) as client:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                if host not in permitted:
                    # Refused before the user is asked: a question whose yes changes nothing.
                    # The connection is checked again, by the backend, whatever this found.
                    looked_up = checked_addresses(host, _port(url), allow_hosts)
                    await asyncio.wait_for(looked_up, clock.left())
                    with clock.paused():
                        await permit(host, url)
                    permitted.add(host)
                sent = client.send(client.build_request("GET", url), stream=True)
                response = await asyncio.wait_for(sent, clock.left())
            except asyncio.TimeoutError:
                raise clock.late() from None
            try:
                location = response.headers.get("location")
                if response.is_redirect and location:
                    url, host = checked_url(urljoin(url, location))
                    continue
                return await _read(response, clock)
            finally:
                await response.aclose()
    raise Refused(f"more than {MAX_REDIRECTS} redirects; the last went to {url}")


def _port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


async def _read(response: httpx2.Response, clock: _Clock) -> Fetched:
    """The response with its body: at most MAX_BODY bytes (decoded: httpx inflates a
    compressed body in bounded pieces), and what came before the deadline."""
    chunks: list[bytes] = []
    size = 0
    truncated = late = False
    pieces = response.aiter_bytes()
    try:
        while size <= MAX_BODY:
            chunk = await asyncio.wait_for(pieces.__anext__(), clock.left())
            chunks.append(chunk)
            size += len(chunk)
        truncated = True
    except StopAsyncIteration:
        pass
    except asyncio.TimeoutError:
        late = True
    finally:
        await pieces.aclose()
    media = response.headers.get("content-type", "").partition(";")[0]
    return Fetched(
        url=str(response.url),
        status=response.status_code,
        content_type=media.strip().lower(),
        charset=response.charset_encoding,
        body=b"".join(chunks)[:MAX_BODY],
        truncated=truncated,
        late=late,
    )
