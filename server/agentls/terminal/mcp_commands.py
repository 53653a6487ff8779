"""`agentls mcp list`, `resources`, `login NAME`, `logout NAME`, `approve NAME`, and
`agentls hooks approve`: the MCP servers this folder would use (their state, their resources),
signing in to one ahead of a task or forgetting its tokens, and the user's approval of what
the repository asks to run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ..config import project_settings, user_settings
from ..extensions import mcp_auth, mcp_servers
from ..extensions.for_task import project_waiting
from ..extensions.mcp_config import ServerSpec, expand, parse_servers
from ..extensions.mcp_prompts import commands
from ..extensions.mcp_user import Answer, set_current
from ..extensions.programs import Programs
from ..extensions.trust import Trust
from ..settings.assembly import Settings
from ..settings.user import load as load_user_settings


def _specs(root: Path) -> tuple[Settings, list[ServerSpec], list[ServerSpec], set[str]]:
    """The user's settings, the servers that would start here, the project's, and the names
    of the project's still waiting for approval."""
    settings, problems = load_user_settings()
    for problem in problems:
        print(f"agentls: {problem}")
    project = project_settings.load(root)
    waiting = {w.name for w in project_waiting(project, Trust(root)) if w.kind == "mcp"}
    try:
        theirs = list(parse_servers(project.mcp_servers, "project"))
    except ValueError as error:
        print(f"agentls: .mcp.json: {error}")
        theirs = []
    names = {spec.name for spec in settings.mcp_servers}
    specs = [
        *settings.mcp_servers,
        *(s for s in theirs if s.name not in waiting and s.name not in names),
    ]
    return settings, specs, theirs, waiting


async def _started(
    root: Path, settings: Settings, specs: list[ServerSpec], sign_in: bool = False
) -> list[mcp_servers.Server]:
    programs = Programs.of(root, settings)
    servers = [
        mcp_servers.start(spec, programs, sign_in, settings.mcp_auth_timeout) for spec in specs
    ]
    await mcp_servers.started(servers, settings.mcp_startup_timeout)
    return servers


async def _stopped(servers: list[mcp_servers.Server]) -> None:
    for server in servers:
        if server.task is not None:
            server.task.cancel()
    await asyncio.gather(*(s.task for s in servers if s.task), return_exceptions=True)


async def _listed(root: Path) -> int:
    settings, specs, theirs, waiting = _specs(root)
    servers = await _started(root, settings, specs)
    for spec in theirs:
        if spec.name in waiting:
            print(f"{spec.name} (project): waiting for approval: {spec.described()}")
            print(f"  agentls mcp approve {spec.name}")
    for server in servers:
        spec = server.spec
        state = "connected" if server.state == "ready" else server.state
        print(f"{spec.name} ({spec.source}): {state}: {spec.command_line()}")
        if server.state == "ready":
            names = ", ".join(tool.name for tool in server.tools) or "(none)"
            print(f"  tools: {names}")
            if server.prompts:
                print("  commands: " + ", ".join(f"/{c.name}" for c in commands([server])))
        elif server.state == "needs sign-in":
            print(f"  agentls mcp login {spec.name}")
        elif server.error:
            print("  " + server.error.replace("\n", "\n  "))
    if not specs and not waiting:
        print("No MCP servers: add them under mcpServers in " + str(user_settings.settings_path()))
    await _stopped(servers)
    return 0


def list_servers() -> int:
    return asyncio.run(_listed(Path.cwd()))


async def _resources(root: Path) -> int:
    settings, specs, _, _ = _specs(root)
    servers = await _started(root, settings, specs)
    for server in servers:
        if server.state != "ready":
            print(f"{server.spec.name}: {server.state} (see `agentls mcp list`)")
            continue
        print(f"{server.spec.name}: {len(server.resources)} resources")
        for resource in server.resources:
            about = resource.description or resource.name or ""
            print(f"  {resource.uri}" + (f"  {about}" if about else ""))
    await _stopped(servers)
    return 0


def list_resources() -> int:
    return asyncio.run(_resources(Path.cwd()))


class _Printed:
    """`agentls mcp login`'s user: the URL printed; a server's question not answered."""

    def open_url(self, server: str, url: str, why: str) -> None:
        print(f"{why}: open {url}", flush=True)

    async def elicit(self, server: str, message: str, schema: dict[str, object]) -> Answer:
        return Answer("decline", reason="agentls mcp login answers no questions")


def _http_spec(name: str) -> ServerSpec | None:
    _, specs, _, _ = _specs(Path.cwd())
    spec = next((s for s in specs if s.name == name), None)
    if spec is None:
        print(f"agentls: no MCP server {name!r} here (see `agentls mcp list`)")
    elif not spec.http:
        print(f"agentls: {name} runs as a program (stdio): it has nothing to sign in to")
        return None
    return spec


def _url(spec: ServerSpec) -> str:
    return expand(str(spec.definition["url"]), mcp_servers.variables_for(spec))


async def _login(name: str) -> int:
    spec = _http_spec(name)
    if spec is None:
        return 1
    set_current(_Printed())
    settings = load_user_settings()[0]
    (server,) = await _started(Path.cwd(), settings, [spec], sign_in=True)
    await mcp_servers.started([server], settings.mcp_auth_timeout)
    ok = server.state == "ready"
    if ok:
        signed = mcp_auth.signed_in(_url(spec))
        print(f"{name}: " + ("signed in" if signed else "connected (it asked for no sign-in)"))
    else:
        print(f"{name}: {server.state}: {server.error}")
    await _stopped([server])
    return 0 if ok else 1


def login(name: str) -> int:
    return asyncio.run(_login(name))


def logout(name: str) -> int:
    spec = _http_spec(name)
    if spec is None:
        return 1
    if mcp_auth.logout(_url(spec)):
        print(f"{name}: signed out (its tokens are removed)")
    else:
        print(f"{name}: not signed in")
    return 0


def approve(kind: str, name: str) -> int:
    """Approve the project's server `name` (MCP or `lsp`, or its hooks) as defined now."""
    root = Path.cwd()
    trust = Trust(root)
    for waiting in project_waiting(project_settings.load(root), trust):
        if waiting.kind == kind and waiting.name == name:
            trust.approve(kind, name, waiting.definition)
            print(f"Approved for {root}: {waiting.shown}")
            return 0
    what, listed = {
        "hooks": ("hooks", "mcp"),
        "lsp": (f"language server {name!r}", "lsp"),
    }.get(kind, (f"MCP server {name!r}", "mcp"))
    print(f"agentls: the project has no {what} waiting for approval (see `agentls {listed} list`)")
    return 1
