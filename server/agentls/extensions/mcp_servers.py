"""MCP servers, through the official SDK (`mcp`): configured in Claude Code's shape, started
in the background with a bound, their tools offered as `mcp__<server>__<tool>`, every page of
their lists read, and read again when the server says a list changed.

A server is a `Server`: its connection lives in a task of its own (the SDK's context must be
entered and left in one task) for as long as the event loop runs, and is shared by the tasks
that follow, so a server starts once per session, not per task. A server that fails to start
(or takes longer than `mcpStartupTimeout`) is named once, with the last lines of its stderr,
and its tools are absent; a call is bounded by `mcpCallTimeout`, and a cancel reaches it.
An HTTP server that asks for a sign-in gets one (`mcp_auth.py`), awaited up to
`mcpAuthTimeout`; its questions go to the user (`mcp_elicitation.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..permissions.gate import Request
from ..shell import launch, sandbox
from ..shell.sandbox.git_audit import GitAudit
from ..tools.base import BeforeChange, Tool, ToolContext, ToolError
from . import mcp_elicitation
from .mcp_config import NAME_CHARACTERS, ServerSpec, expand, variables
from .programs import Programs

log = logging.getLogger(__name__)

State = Literal[
    "waiting for approval", "starting", "signing in", "needs sign-in", "ready", "failed"
]
STDERR_LINES = 10
MAX_PAGES = 100
"""Pages of one list read at most: a server whose cursor never ends cannot hang a start."""


def tool_name(server: str, tool: str) -> str:
    """`mcp__server__tool`, within the APIs' 64 characters of [A-Za-z0-9_-]."""
    name = f"mcp__{server}__{NAME_CHARACTERS.sub('_', tool)}"
    if len(name) <= 64:
        return name
    return name[:55] + "_" + hashlib.sha256(name.encode()).hexdigest()[:8]


@dataclass(kw_only=True)
class Server:
    spec: ServerSpec
    state: State = "starting"
    tools: list[Any] = field(default_factory=list)
    resources: list[Any] = field(default_factory=list)
    prompts: list[Any] = field(default_factory=list)
    sign_in: bool = True
    """Whether a sign-in may be started (not by `agentls mcp list`)."""
    auth_timeout: float = 120.0
    changed: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)
    """Told (`lists_changed()`) when a list was read again: the tasks offering its tools,
    held weakly, so a finished task falls away."""
    reading: set[asyncio.Future[None]] = field(default_factory=set)
    """Lists being read again now (held, so the loop does not drop them unfinished)."""
    error: str = ""
    reported: bool = False
    """Whether its failure was shown to the user (once)."""
    started: asyncio.Event = field(default_factory=asyncio.Event)
    client: Any = None
    task: asyncio.Task[None] | None = None
    watch: Watch | None = None
    """A project's server's git audit (repository code, run in the sandbox)."""
    planted: list[str] = field(default_factory=list)
    """What the audit disarmed at its start, for the user (said once)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.spec.name,
            "source": self.spec.source,
            "state": self.state,
            "tools": [t.name for t in self.tools],
            "resources": [str(r.uri) for r in self.resources],
            "prompts": [p.name for p in self.prompts],
            "error": self.error,
        }

    def _ready(self) -> Any:
        if self.state != "ready" or self.client is None:
            raise ToolError(f"the MCP server {self.spec.name} is {self.state}: {self.error}")
        return self.client

    async def _bounded(self, work: Any, timeout: float) -> Any:
        try:
            return await asyncio.wait_for(work, timeout)
        except asyncio.TimeoutError:
            raise ToolError(
                f"the MCP server {self.spec.name} did not answer within {timeout:g} s "
                "(the mcpCallTimeout setting)"
            ) from None
        except ToolError:
            raise
        except Exception as error:  # the server's failure is the model's to read
            raise ToolError(f"the MCP server {self.spec.name} failed: {error}") from None

    async def _caught_up(self, timeout: float) -> None:
        """A list the call changed (the server said so before it answered) is read again
        before the model's next step, which then sees it."""
        await asyncio.sleep(0)  # the notification's handler runs before the answer's
        if self.reading:
            await asyncio.wait(set(self.reading), timeout=timeout)

    async def read_resource(self, uri: str, timeout: float) -> Any:
        return await self._bounded(self._ready().read_resource(uri), timeout)

    async def get_prompt(self, name: str, arguments: dict[str, str], timeout: float) -> Any:
        return await self._bounded(self._ready().get_prompt(name, arguments), timeout)

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> tuple[str, bool]:
        client = self._ready()
        try:
            result = await self._bounded(
                client.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout
            )
        finally:
            planted = self.watch.check() if self.watch else []
        await self._caught_up(timeout)
        text = result_text(result)
        note = sandbox.blocked_note("", True, planted)
        return (f"{text}\n{note}" if note else text), bool(result.is_error)


class Watch:
    """The git audit around a project's server: from its start to the end of each call, and
    to its own end. It runs all along, so each check first takes the next baseline, then
    judges what changed since the last: what it plants after the baseline is judged at the
    next check."""

    def __init__(self, audit: GitAudit) -> None:
        self.audit = audit
        self.settings = audit.before()

    def check(self) -> list[str]:
        since, self.settings = self.settings, self.audit.before()
        planted = self.audit.after(since)
        for line in planted:
            log.warning("the project's MCP server planted a git setting: %s", line)
        return planted


def result_text(result: Any) -> str:
    """A tool result as text: text as it is, images and audio as notes, resources inlined."""
    parts: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(block.data) * 3 // 4
            parts.append(f"[{kind}: {block.mime_type}, about {size} bytes, not shown]")
        elif kind == "resource":
            inner = block.resource
            parts.append(getattr(inner, "text", None) or f"[resource {inner.uri}: binary]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {block.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts) or "(no content)"


_RUNNING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Server]] = (
    weakref.WeakKeyDictionary()
)
"""The servers started on each event loop, by definition: shared by that loop's tasks."""


def running() -> dict[str, Server]:
    return _RUNNING.setdefault(asyncio.get_running_loop(), {})


def start(
    spec: ServerSpec, programs: Programs, sign_in: bool = True, auth_timeout: float = 120.0
) -> Server:
    """The server for `spec`, started now in the background unless it runs already; `sign_in`:
    whether it may start a sign-in (else it waits as "needs sign-in")."""
    servers = running()
    server = servers.get(spec.key())
    if server is None:
        server = servers[spec.key()] = Server(spec=spec, sign_in=sign_in, auth_timeout=auth_timeout)
        server.task = asyncio.ensure_future(_serve(server, programs))
    return server


def stop(server: Server) -> None:
    """End the server's connection (it starts again when next asked for)."""
    running().pop(server.spec.key(), None)
    if server.task is not None:
        server.task.cancel()


async def _serve(server: Server, programs: Programs) -> None:
    # The SDK (and mcp_auth, which subclasses its OAuth provider) only once a server starts:
    # importing it costs half a second that a task without MCP servers need not pay.
    from mcp import Client

    from . import mcp_auth

    spec = server.spec
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog,
        launch.private_folder() as folder,
    ):
        try:
            if spec.source == "project" and not spec.http:
                server.watch = Watch(programs.audit)
            transport = _transport(spec, programs, folder, errlog, server)
            async with Client(
                transport,
                client_info=_client_info(),
                elicitation_callback=mcp_elicitation.callback(spec.name, programs.root),
                message_handler=_on_message(server),
            ) as client:
                server.client = client
                await _read_lists(server, ("tools", "resources", "prompts"))
                server.planted = server.watch.check() if server.watch else []
                server.state = "ready"
                server.started.set()
                await _listen(server)  # held open for the loop's life
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # the SDK raises exception groups
            errlog.flush()
            errlog.seek(0)
            # Each line once: a program that retries says the same thing again.
            lines = dict.fromkeys(errlog.read().splitlines()[-STDERR_LINES:])
            tail = "\n".join(lines) + _sandbox_hint(spec, programs, "\n".join(lines))
            first = _first(error)
            if isinstance(first, mcp_auth.NeedsSignIn):
                server.state, server.error = "needs sign-in", str(first)
                server.started.set()
                return
            said = mcp_auth.failure(spec.name, first) or _reason(error)
            _failed(server, said + (f"\nstderr:\n{tail}" if tail else ""))
        finally:
            server.client = None
            if server.watch is not None:
                server.watch.check()  # its end: the process is gone


async def _pages(fetch: Any, field_name: str) -> list[Any]:
    """Every page of a list (`tools/list`, ...), following `nextCursor`; fetched afresh, not
    from the SDK's cache, since a list is read again because it changed."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor=cursor, cache_mode="refresh")
        items.extend(getattr(page, field_name))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def _read_lists(server: Server, kinds: tuple[str, ...]) -> None:
    """Read the lists the server offers (by its capabilities), every page."""
    client = server.client
    offers = client.server_capabilities
    if "tools" in kinds:
        server.tools = await _pages(client.list_tools, "tools")
    if "resources" in kinds and offers.resources is not None:
        server.resources = await _pages(client.list_resources, "resources")
    if "prompts" in kinds and offers.prompts is not None:
        server.prompts = await _pages(client.list_prompts, "prompts")


_CHANGES = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


def _on_message(server: Server) -> Any:
    """The SDK's message handler: a list changed (a server of 2025's protocols says so
    unasked) is read again in the background, and the tasks offering it are told."""

    async def handle(message: Any) -> None:
        kind = _CHANGES.get(getattr(getattr(message, "root", message), "method", ""))
        if kind is not None and server.client is not None:
            # Not awaited here: the session's reader waits on this handler, and the new
            # list's request needs that reader.
            reading = asyncio.ensure_future(_changed(server, kind))
            server.reading.add(reading)
            reading.add_done_callback(server.reading.discard)

    return handle


async def _changed(server: Server, kind: str) -> None:
    try:
        await _read_lists(server, (kind,))
    except Exception as error:  # the old list stays; the next change tries again
        log.warning("MCP server %s: reading its %s again failed: %s", server.spec.name, kind, error)
        return
    for task in list(server.changed):
        task.lists_changed()


async def _listen(server: Server) -> None:
    """Wait for the loop's end; on the 2026 protocol, where a server tells of changed lists
    only to a client that listens (`subscriptions/listen`), listen for them meanwhile."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    client = server.client
    offers = client.server_capabilities
    wanted = {
        "tools_list_changed": bool(offers.tools and offers.tools.list_changed),
        "resources_list_changed": bool(offers.resources and offers.resources.list_changed),
        "prompts_list_changed": bool(offers.prompts and offers.prompts.list_changed),
    }
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS and any(wanted.values()):
        with contextlib.suppress(Exception):  # no listening: the lists stay as read
            async with client.listen(**wanted) as events:
                async for event in events:
                    kind = type(event).__name__.removesuffix("ListChanged").lower()
                    if kind in ("tools", "resources", "prompts"):
                        await _changed(server, kind)
    await asyncio.Event().wait()


def _failed(server: Server, error: str) -> None:
    if server.state == "failed":
        return
    server.state, server.error, server.tools = "failed", error, []
    server.started.set()
    # For the log file: the door tells the user, once (a warning would print it again).
    log.info("MCP server %s failed: %s", server.spec.name, error)


def _sandbox_hint(spec: ServerSpec, programs: Programs, stderr: str) -> str:
    """The way out when the sandbox refused a project's server a write."""
    if spec.source != "project" or programs.sandbox_setting == "off":
        return ""
    if not sandbox.refused_write(stderr):
        return ""
    from ..config.user_settings import settings_path

    return (
        "\n(the sandbox: a project's server may write only the workspace and its own cache. "
        "To run it on the host, add it to your own mcpServers in "
        f"{settings_path()} instead, or set sandbox to off)"
    )


def _first(error: BaseException) -> BaseException:
    while getattr(error, "exceptions", None):  # an exception group: its first
        error = error.exceptions[0]  # type: ignore[attr-defined]
    return error


def _reason(error: BaseException) -> str:
    error = _first(error)
    return f"{type(error).__name__}: {error}"


def _client_info() -> Any:
    from mcp import Implementation

    from .. import __version__

    return Implementation(name="agentls", version=__version__)


def _transport(
    spec: ServerSpec, programs: Programs, folder: Path, errlog: Any, server: Server | None = None
) -> Any:
    env = variables_for(spec)
    definition = spec.definition
    if spec.http:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        from . import mcp_auth

        headers = {k: expand(v, env) for k, v in definition.get("headers", {}).items()}
        url = expand(definition["url"], env)
        auth = None
        # A server the user gave an Authorization header is theirs to sign in to; any other
        # may answer 401 and be signed in to, as the MCP authorization spec says.
        if "oauth" in definition or not any(k.lower() == "authorization" for k in headers):
            oauth = mcp_auth.expanded(definition.get("oauth", {}), lambda v: expand(v, env))
            auth = mcp_auth.provider_for(
                spec.name,
                url,
                oauth,
                server.auth_timeout if server else 120.0,
                server.sign_in if server else False,
                (lambda: setattr(server, "state", "signing in")) if server else (lambda: None),
                programs.root,
            )
        timeout = httpx2.Timeout(30, read=300)
        client = httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout)
        return streamable_http_client(url, http_client=client)
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = [expand(definition["command"], env)] + [
        expand(a, env) for a in definition.get("args", [])
    ]
    own = {k: expand(v, env) for k, v in definition.get("env", {}).items()}
    if spec.source == "project":
        program = programs.projects(argv, own)
    else:  # a plugin's server runs in its folder (plugin_paths.py), the others in `folder`
        cwd = definition.get("cwd")
        program = programs.users(argv, Path(cwd) if cwd else folder, own)
    params = StdioServerParameters(
        command=program.argv[0], args=list(program.argv[1:]), env=program.env, cwd=program.cwd
    )
    return stdio_client(params, errlog=errlog)


def variables_for(spec: ServerSpec) -> dict[str, str]:
    """The variables `${VAR}` may name in `spec`: the user's whole environment for theirs."""
    return variables(spec.source == "project")


async def started(servers: list[Server], bound: float) -> None:
    """Wait until each server is ready or failed, at most `bound` seconds from now, and a
    server whose sign-in runs then up to its `auth_timeout` more; one still starting then
    counts as failed for this task and goes on starting."""
    waiting = [s.started.wait() for s in servers if not s.started.is_set()]
    if not waiting:
        return
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(*waiting), bound)
    signing = [s for s in servers if s.state == "signing in" and not s.started.is_set()]
    if signing:
        longest = max(s.auth_timeout for s in signing)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(s.started.wait() for s in signing)), longest)
    for server in servers:
        if not server.started.is_set():
            server.error = f"not started within {bound:g} s (the mcpStartupTimeout setting)"


def tools_of(server: Server, call_timeout: float, description_limit: int = 1000) -> list[Tool]:
    """The server's tools as agentls tools: each call asked like a command, bounded."""
    made = []
    for tool in server.tools:
        name = tool_name(server.spec.name, tool.name)
        hint = tool.annotations.read_only_hint if tool.annotations else None
        made.append(
            Tool(
                name=name,
                description=(tool.description or tool.title or tool.name)[:description_limit],
                properties={},
                required=(),
                handler=_handler(server, tool.name, name, bool(hint), call_timeout),
                summary_field="",
                read_only=bool(hint),
                gated=True,
                input_schema=dict(tool.input_schema or {"type": "object"}),
            )
        )
    return made


def _handler(
    server: Server, remote: str, name: str, read_only: bool, timeout: float
) -> Callable[[ToolContext, dict[str, Any], BeforeChange], Any]:
    async def call(context: ToolContext, arguments: dict[str, Any], before: BeforeChange) -> str:
        shown = f"{name} {json.dumps(arguments, ensure_ascii=False)}"
        await context.gate().ask(
            Request(source="tool", tool=name, arguments=arguments, shown=shown)
        )
        if not read_only:
            await before(None)  # an MCP tool may change any file
        text, is_error = await server.call(remote, arguments, timeout)
        if is_error:
            raise ToolError(text)
        return text

    return call
