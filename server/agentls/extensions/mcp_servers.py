"""MCP servers, through the official SDK (`mcp`): configured in Claude Code's shape, started
in the background with a bound, their tools offered as `mcp__<server>__<tool>`.

A server is a `Server`: its connection lives in a task of its own (the SDK's context must be
entered and left in one task) for as long as the event loop runs, and is shared by the tasks
that follow, so a server starts once per session, not per task. A server that fails to start
(or takes longer than `mcpStartupTimeout`) is named once, with the last lines of its stderr,
and its tools are absent; a call is bounded by `mcpCallTimeout`, and a cancel reaches it."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..shell import launch, sandbox
from ..shell.sandbox.git_audit import GitAudit
from ..tools.base import BeforeChange, Tool, ToolContext, ToolError
from .mcp_config import NAME_CHARACTERS, ServerSpec, expand
from .programs import Programs

log = logging.getLogger(__name__)

State = Literal["waiting for approval", "starting", "ready", "failed"]
STDERR_LINES = 10


def tool_name(server: str, tool: str) -> str:
    """`mcp__server__tool`, within the APIs' 64 characters of [A-Za-z0-9_-]."""
    name = f"mcp__{server}__{NAME_CHARACTERS.sub('_', tool)}"
    if len(name) <= 64:
        return name
    return name[:55] + "_" + hashlib.sha256(name.encode()).hexdigest()[:8]


@dataclass
class Server:
    spec: ServerSpec
    state: State = "starting"
    tools: list[Any] = field(default_factory=list)
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
            "error": self.error,
        }

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> tuple[str, bool]:
        if self.state != "ready" or self.client is None:
            raise ToolError(f"the MCP server {self.spec.name} is {self.state}: {self.error}")
        try:
            result = await asyncio.wait_for(
                self.client.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout
            )
        except asyncio.TimeoutError:
            raise ToolError(
                f"the MCP server {self.spec.name} did not answer within {timeout:g} s "
                "(the mcpCallTimeout setting)"
            ) from None
        except Exception as error:  # the server's failure is the model's to read
            raise ToolError(f"the MCP server {self.spec.name} failed: {error}") from None
        finally:
            planted = self.watch.check() if self.watch else []
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


def start(spec: ServerSpec, programs: Programs) -> Server:
    """The server for `spec`, started now in the background unless it runs already."""
    servers = running()
    server = servers.get(spec.key())
    if server is None:
        server = servers[spec.key()] = Server(spec)
        server.task = asyncio.ensure_future(_serve(server, programs))
    return server


async def _serve(server: Server, programs: Programs) -> None:
    from mcp import Client

    spec = server.spec
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog,
        launch.private_folder() as folder,
    ):
        try:
            if spec.source == "project" and not spec.http:
                server.watch = Watch(programs.audit)
            transport = _transport(spec, programs, folder, errlog)
            async with Client(transport, client_info=_client_info()) as client:
                server.tools = list((await client.list_tools()).tools)
                server.planted = server.watch.check() if server.watch else []
                server.client, server.state = client, "ready"
                server.started.set()
                await asyncio.Event().wait()  # held open for the loop's life
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # the SDK raises exception groups
            errlog.flush()
            errlog.seek(0)
            tail = "\n".join(errlog.read().splitlines()[-STDERR_LINES:])
            _failed(server, f"{_reason(error)}" + (f"\nstderr:\n{tail}" if tail else ""))
        finally:
            server.client = None
            if server.watch is not None:
                server.watch.check()  # its end: the process is gone


def _failed(server: Server, error: str) -> None:
    if server.state == "failed":
        return
    server.state, server.error, server.tools = "failed", error, []
    server.started.set()
    log.warning("MCP server %s failed: %s", server.spec.name, error)


def _reason(error: BaseException) -> str:
    while getattr(error, "exceptions", None):  # an exception group: its first
        error = error.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(error).__name__}: {error}"


def _client_info() -> Any:
    from mcp import Implementation

    from .. import __version__

    return Implementation(name="agentls", version=__version__)


def _transport(spec: ServerSpec, programs: Programs, folder: Path, errlog: Any) -> Any:
    env = variables_for(spec)
    definition = spec.definition
    if spec.http:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {k: expand(v, env) for k, v in definition.get("headers", {}).items()}
        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
        return streamable_http_client(expand(definition["url"], env), http_client=client)
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = [expand(definition["command"], env)] + [
        expand(a, env) for a in definition.get("args", [])
    ]
    own = {k: expand(v, env) for k, v in definition.get("env", {}).items()}
    if spec.source == "project":
        program = programs.projects(argv, own)
    else:
        program = programs.users(argv, folder, own)
    params = StdioServerParameters(
        command=program.argv[0], args=list(program.argv[1:]), env=program.env, cwd=program.cwd
    )
    return stdio_client(params, errlog=errlog)


PROJECT_EXPANDS = ("HOME", "USER")
"""The only variables a repository's definition may name: a project never chooses to send
one of the user's keys anywhere (a header, an argument, its server's environment)."""


def variables_for(spec: ServerSpec) -> dict[str, str]:
    """The variables `${VAR}` may name in `spec`: the user's whole environment for theirs."""
    if spec.source == "project":
        return {name: os.environ[name] for name in PROJECT_EXPANDS if name in os.environ}
    return dict(os.environ)


async def started(servers: list[Server], bound: float) -> None:
    """Wait until each server is ready or failed, at most `bound` seconds from now; one
    still starting then counts as failed for this task and goes on starting."""
    waiting = [s.started.wait() for s in servers if not s.started.is_set()]
    if not waiting:
        return
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(*waiting), bound)
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
        if context.asks(name, arguments):
            shown = json.dumps(arguments, ensure_ascii=False)
            decision = await context.approver.approve(f"{name} {shown}")
            if decision == "deny":
                raise ToolError(
                    "The user denied this call. Do not retry it; ask or take another way."
                )
            if decision == "allow_task":
                context.commands_allowed_for_task = True
        if not read_only:
            await before(None)  # an MCP tool may change any file
        text, is_error = await server.call(remote, arguments, timeout)
        if is_error:
            raise ToolError(text)
        return text

    return call
