"""A task's extensions, put together: the hooks (the user's and the trusted project's), the MCP
servers (started once per session, awaited with a bound) and their tools, offered whole or
through tool_search. The loop sees it as `interfaces.Hooks`; the tools in `ToolContext`."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.project_settings import ProjectSettings
from ..eyes import sources
from ..interfaces import Approver
from ..tools.base import ToolContext, ToolError
from . import agent_definitions, mcp_prompts, mcp_resources, mcp_servers, plugins, skill_tool
from .commands import Shared, approve_waiting, available, described, invoked
from .front_matter import scan
from .hooks import Hooks, parse_hooks
from .mcp_config import ServerSpec, parse_servers
from .mcp_servers import Server
from .mcp_user import McpUser, set_current
from .programs import Programs
from .settings import ExtensionSettings
from .tool_search import schema_tokens, search_tool
from .trust import Trust

_DECLINED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[str]] = (
    weakref.WeakKeyDictionary()
)
"""What the user said "not now" to on this event loop (a session): not asked again."""


@dataclass
class Waiting:
    """A project's server or hooks not approved yet: listed, never started."""

    kind: str
    name: str
    definition: Any
    shown: str


def project_waiting(project: ProjectSettings, trust: Trust) -> list[Waiting]:
    waiting = [
        Waiting("mcp", spec.name, dict(spec.definition), spec.described())
        for spec in _project_servers(project)
        if not trust.approved("mcp", spec.name, dict(spec.definition))
    ]
    waiting += [
        Waiting(sources.KIND, name, definition, ServerSpec(name, definition).described())
        for name, definition in sources.from_project(project.lsp_servers)[0]
        if not trust.approved(sources.KIND, name, definition)
    ]
    if project.hooks and not trust.approved("hooks", "project", project.hooks):
        commands = sorted({hook.command for hook in _project_hooks(project)})
        waiting.append(Waiting("hooks", "project", project.hooks, "; ".join(commands)))
    with scan():
        waiting += [
            Waiting("agent", path, text, _shown(path, text))
            for path, text in project.agents.items()
            if not trust.approved("agent", path, text)
        ]
    shared = available(trust.root, (), trust).waiting
    if shared:
        waiting.append(Waiting("shared", "project", shared, described(shared)))
    return waiting


def _shown(path: str, text: str) -> str:
    """A definition in a few words for the question: the file, its name, tools and model."""
    try:
        found = agent_definitions.parse(text, path)
    except ValueError as error:
        return f"{path}, which is ignored: {error}"
    tools = ", ".join(found.tools) if found.tools is not None else "every tool of the task"
    model = f", model {found.model}" if found.model else ""
    return f"{found.name} from {path}: {tools}{model}"


def approved_agents(project: ProjectSettings, trust: Trust) -> list[agent_definitions.Definition]:
    """The project's subagent definitions the user approved as they are now."""
    texts = {p: t for p, t in project.agents.items() if trust.approved("agent", p, t)}
    return agent_definitions.parsed(texts)[0]


def _project_servers(project: ProjectSettings) -> tuple[ServerSpec, ...]:
    try:
        return parse_servers(project.mcp_servers, "project")
    except ValueError:
        return ()


def _project_hooks(project: ProjectSettings) -> tuple[Any, ...]:
    try:
        return parse_hooks(project.hooks, project=True)
    except ValueError:
        return ()


class TaskExtensions:
    def __init__(
        self,
        root: Path,
        settings: ExtensionSettings,
        project: ProjectSettings,
        servers: tuple[ServerSpec, ...],
        approver: Approver,
        session_id: Callable[[], str],
        notify: Callable[[str], None],
        user: McpUser | None = None,
        *,
        programs: Programs,
    ) -> None:
        self.root, self.settings, self.project = root, settings, project
        self.user = user
        """How the door reaches the user for a server (sign-in, questions); None: nobody."""
        self.specs = servers
        self.approver = approver
        self.notify = notify
        self.trust = Trust(root)
        self.programs = programs
        """Where its hooks' and servers' programs run (the shell's settings)."""
        # A plugin's hooks and MCP servers are the user's own: they run as the user's do.
        self.plugins, problems = plugins.installed(settings.plugins)
        for problem in problems:
            notify(problem)
        own_hooks = (*settings.hooks, *(h for p in self.plugins for h in p.hooks()))
        for plugin in self.plugins:
            specs, problems = plugin.mcp_servers()
            self.specs = (*self.specs, *specs)
            for problem in problems:
                notify(problem)
        self.user_hooks = own_hooks
        self.hooks = Hooks(own_hooks, self.programs, session_id, notify)
        self.context: ToolContext | None = None
        self.servers: list[Server] = []
        self.shared = Shared()

    async def _approve_project(self) -> None:
        """Ask about each project server and the project's hooks not approved yet, once per
        session for a "not now"; the approved are remembered by their exact definition."""
        declined = _DECLINED.setdefault(asyncio.get_running_loop(), set())
        # Read in a thread: the repository's files are parsed here, before any approval.
        for waiting in await asyncio.to_thread(project_waiting, self.project, self.trust):
            key = f"{waiting.kind}:{waiting.name}:{waiting.shown}"
            if key in declined or (waiting.kind == sources.KIND and not self._own_eyes()):
                continue
            where = "" if self.programs.sandbox_setting == "off" else " in the sandbox"
            what = (
                f"start the project's MCP server {waiting.name}{where} ({waiting.shown})"
                if waiting.kind == "mcp"
                else f"start the project's language server {waiting.name}{where} ({waiting.shown})"
                if waiting.kind == sources.KIND
                else f"give the model its skills and commands ({waiting.shown})"
                if waiting.kind == "shared"
                else f"run the project's hooks{where} ({waiting.shown})"
                if waiting.kind == "hooks"
                else f"use the project's subagent {waiting.shown}"
            )
            if await self.approver.approve_project(what):
                if waiting.kind == "shared":
                    approve_waiting(self.trust, waiting.definition)
                else:
                    self.trust.approve(waiting.kind, waiting.name, waiting.definition)
            else:
                declined.add(key)

    def _own_eyes(self) -> bool:
        """Whether this task starts language servers of its own: not where the editor's
        serve (the LSP door), so nothing is asked there that would not start."""
        return self.context is not None and self.context.own_servers is not None

    def _approved_specs(self) -> list[ServerSpec]:
        project = [
            spec
            for spec in _project_servers(self.project)
            if self.trust.approved("mcp", spec.name, dict(spec.definition))
        ]
        # The user's own come first: a project cannot shadow one of theirs by its name.
        names = {spec.name for spec in self.specs}
        return [*self.specs, *(spec for spec in project if spec.name not in names)]

    async def _start_servers(self) -> None:
        settings = self.settings
        specs = self._approved_specs()
        self.servers = [
            mcp_servers.start(spec, self.programs, auth_timeout=settings.mcp_auth_timeout)
            for spec in specs
        ]
        await mcp_servers.started(self.servers, settings.mcp_startup_timeout)
        for server in self.servers:
            server.changed.add(self)
            if server.state == "needs sign-in" and not server.reported:
                server.reported = True
                self.notify(
                    f"the MCP server {server.spec.name} needs a sign-in: "
                    f"agentls mcp login {server.spec.name}"
                )
            elif server.state != "ready" and server.error and not server.reported:
                server.reported = True  # named once, a slow one too, its tools left out
                self.notify(f"the MCP server {server.spec.name} failed: {server.error}")
            planted, server.planted = server.planted, []
            for line in planted:  # said once, by the first task that finds it
                self.notify(f"the MCP server {server.spec.name} planted a git setting: {line}")
        # Their prompts join the workspace's commands (commands.SOURCES), this task's too.
        mcp_prompts.serving(self.root, self.servers, settings.mcp_call_timeout)
        await self.share()

    async def share(self) -> None:
        """Find the skills and commands this task may use (the project's once approved):
        the catalog for the system prompt, the skill tool over it. Read in a thread: a
        repository's files are parsed to find them, and a task waits for none of it."""
        self.shared = await asyncio.to_thread(available, self.root, self.plugins, self.trust)
        if self.context is not None:
            skills = self.shared.catalog()
            window = self.context.settings.context_window
            self.context.skill_catalog = skill_tool.catalog(
                skills, skill_tool.budget(self.settings.skills, window)
            )
            self._offer()

    def _skill_tools(self) -> dict[str, Any]:
        skills = self.shared.catalog()
        return {"skill": skill_tool.skill_tool(skills)} if skills else {}

    async def _expanded(self, task: str) -> str:
        """`/name arguments` (after the editor's context) as its command's task; any other
        text as it is."""
        found = invoked(task)
        command = self.shared.commands.get(found[1]) if found else None
        if found is None:
            return task
        if command is None:
            if found[1].startswith("mcp__"):  # no such prompt: not a task for the model
                raise ValueError(mcp_prompts.unknown(found[1], self.root))
            return task
        if command.skill is not None and self.context is not None:
            skill_tool.load(self.context, command.skill)
        return found[0] + await command.expand(found[2])

    def _offer(self) -> None:
        context = self.context
        if context is None:
            return
        tools = [
            tool
            for server in self.servers
            if server.state == "ready"
            for tool in mcp_servers.tools_of(server, self.settings.mcp_call_timeout)
        ]
        skills = self._skill_tools()
        reading = mcp_resources.read_tool(self.servers, self.settings.mcp_call_timeout)
        own = {**skills, **({reading.name: reading} if reading else {})}
        if schema_tokens(tools) <= self.settings.tool_search_threshold:
            context.added_tools = {**own, **{tool.name: tool for tool in tools}}
        else:
            search = search_tool(sorted(tool.name for tool in tools))
            context.added_tools = {**own, search.name: search}
            context.findable_tools = {tool.name: tool for tool in tools}

    def lists_changed(self) -> None:
        """A server read a list again (it said it changed): the next step offers it."""
        self._offer()

    # interfaces.Hooks

    async def submitted(self, task: str, first: bool) -> tuple[str, str | None]:
        if self.user is not None:
            set_current(self.user)
        await self._approve_project()
        if self.project.hooks and self.trust.approved("hooks", "project", self.project.hooks):
            self.hooks.hooks = (*self.user_hooks, *_project_hooks(self.project))
        await self._start_servers()  # and what the user just approved joins this very task
        try:
            task = await self._expanded(task)
        except (ValueError, ToolError) as error:
            return task, str(error)
        return await self.hooks.submitted(task, first)

    async def stopping(self) -> str | None:
        return await self.hooks.stopping()

    async def compacting(self) -> None:
        await self.hooks.compacting()

    async def before_tool(self, tool: str, arguments: Any) -> tuple[str | None, str | None]:
        return await self.hooks.before_tool(tool, arguments)

    async def after_tool(self, tool: str, arguments: Any, result: str, is_error: bool) -> str:
        return await self.hooks.after_tool(tool, arguments, result, is_error)

    async def subagent_started(self, agent_id: str, agent_type: str) -> str:
        return await self.hooks.subagent_started(agent_id, agent_type)

    async def subagent_stopping(self, agent_id: str, agent_type: str, active: bool) -> str | None:
        return await self.hooks.subagent_stopping(agent_id, agent_type, active)
