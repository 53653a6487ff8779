"""web_fetch's settings: the private hosts it may reach, and how long one fetch may take.
`agentls/settings/` assembles them with the other parts' settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..config.settings import Part, Setting, in_seconds, strings


def _hosts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and v.strip() and "/" not in v for v in value
    ):
        raise ValueError('expected a list of host names, e.g. ["localhost", "intranet.example"]')
    return tuple(v.strip().lower().rstrip(".") for v in value)


ROWS = (
    strings(
        "webFetch.allowHosts",
        "web_fetch_allow_hosts",
        _hosts,
        "Hosts `web_fetch` may reach although they resolve to a loopback, private or "
        'link-local address, e.g. `["localhost", "wiki.intranet"]`; every other such address '
        "is refused. User settings only.",
        user_only=True,
    ),
    in_seconds(
        "webFetch.timeout",
        "web_fetch_timeout",
        30,
        "Seconds one `web_fetch` may take in all: looking the host up, connecting, "
        "redirects and reading the page (not the time you take to answer its question); a page "
        "still arriving then is cut there, said in the result. User settings only.",
        user_only=True,
    ),
)


@dataclass(frozen=True, kw_only=True)
class WebSettings(Part):
    ROWS: ClassVar[tuple[Setting, ...]] = ROWS

    web_fetch_allow_hosts: tuple[str, ...] = ()
    web_fetch_timeout: float = 30.0
