"""The person an MCP server may need: to sign in (a URL to open) and to answer a server's
question (elicitation). Each door says how it reaches them (`McpUser`); the servers are shared
by the tasks of an event loop, so the door of the task running now is the one asked.

Where no door said how (`agentls mcp list`, a server starting between tasks), nobody is asked:
a sign-in URL is only logged and opened, a question is declined with the reason."""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
import webbrowser
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

log = logging.getLogger(__name__)

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Answer:
    """What the user answered a server's question: `content` when accepted (the form's
    fields), `reason` said to the server and the model when declined by nobody."""

    action: Action
    content: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


class McpUser(Protocol):
    def open_url(self, server: str, url: str, why: str) -> None:
        """Show the URL `server` needs the user to open, and `why` (signing in, or the
        server's own words); it is also opened in the browser."""
        ...

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        """Put the server's question (`message`, a form of `schema`'s fields, whose defaults
        are already in place) to the user."""
        ...


class Nobody:
    """No one to ask: `-p`, `agentls mcp list`, or a door that cannot ask."""

    def __init__(self, why: str = "nobody can answer here") -> None:
        self.why = why

    def open_url(self, server: str, url: str, why: str) -> None:
        log.warning("the MCP server %s: %s: %s", server, why, url)

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        return Answer(
            "decline", reason=f"the MCP server {server} asked the user a question, but {self.why}"
        )


_CURRENT: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, McpUser] = (
    weakref.WeakKeyDictionary()
)


def set_current(user: McpUser) -> None:
    """The door of the task that starts now is the one the servers reach."""
    _CURRENT[asyncio.get_running_loop()] = user


def current() -> McpUser:
    return _CURRENT.get(asyncio.get_running_loop()) or Nobody()


def open_in_browser(url: str) -> None:
    """Python's `webbrowser` (so `BROWSER` is honoured), in a thread of its own: a text
    browser or a `BROWSER` command may take its time, and the loop must go on to receive the
    redirect meanwhile."""

    def run() -> None:
        try:
            webbrowser.open(url)
        except Exception as error:  # no browser: the URL is shown anyway
            log.info("could not open a browser: %s", error)

    threading.Thread(target=run, name="agentls-browser", daemon=True).start()
