"""The person an MCP server may need: to sign in (a URL to open) and to answer a server's
question (elicitation). Each door says how it reaches them (`McpUser`); the servers are shared
by the tasks of an event loop, so the door of the task running now is the one asked.

Where no door said how (`agentls mcp list`, a server starting between tasks), nobody is asked:
a sign-in URL is only logged and opened, a question is declined with the reason."""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import subprocess
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..shell import launch

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


_DESKTOP = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY", "BROWSER")
"""What a browser needs of the session beyond the launcher's allow-list: where the desktop is."""

_OPENERS = (("xdg-open",), ("open",))
"""The desktop's own opener, where `BROWSER` names none: Linux desktops, then macOS."""


def browser_commands(url: str, chosen: str | None) -> list[list[str]]:
    """The commands to try, in order: each of `BROWSER`'s (`%s` stands for the URL, else it
    is added, as Python's `webbrowser` reads it), then the desktop's opener."""
    commands = []
    for command in (chosen or "").split(os.pathsep):
        words = shlex.split(command)
        if words:
            with_url = [word.replace("%s", url) for word in words]
            commands.append(with_url if "%s" in command else [*words, url])
    return commands + [[*opener, url] for opener in _OPENERS]


def open_in_browser(url: str, workspace: Path | None = None) -> None:
    """The first browser that starts, in a thread of its own (a text browser or a `BROWSER`
    command may take its time, and the loop must go on to receive the redirect meanwhile).
    It is started as any program agentls starts (`shell/launch.py`): a browser is a child
    like another, so it gets the allow-listed environment, never the user's keys, and a
    private folder as cwd; a bare name is found outside the `workspace` the server serves
    (a repository's `.venv/bin/xdg-open` is not the user's browser)."""
    env = launch.environment(_DESKTOP)

    def run() -> None:
        for argv in browser_commands(url, os.environ.get("BROWSER")):
            try:
                program = launch.program_path(argv[0], env.get("PATH", ""), workspace)
                with launch.private_folder() as folder:
                    done = launch.run(
                        launch.own([program, *argv[1:]], folder, env, workspace),
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        check=False,
                    )
            except OSError as error:  # not there: the next, else the URL shown is enough
                log.info("could not open a browser with %s: %s", argv[0], error)
                continue
            if done.returncode == 0:
                return

    threading.Thread(target=run, name="agentls-browser", daemon=True).start()
