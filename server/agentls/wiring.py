"""Putting a task's agent together from the settings and the environment, the same way for
every front end; each brings its own workspace, approver and progress."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from .agent.budget import LoopLimits
from .agent.conversation import Conversation
from .agent.conversation import note as agentls_note
from .agent.loop import Agent
from .agent.memory import ProjectMemory
from .agent.subagents import delegate
from .agent.task_result import TaskResult
from .config import environment, project_settings
from .config.definition_files import read_folder
from .config.project_settings import ProjectSettings
from .counts import counted
from .extensions import agent_definitions
from .extensions.agent_definitions import Definition
from .extensions.for_task import TaskExtensions, approved_agents
from .extensions.mcp_config import ServerSpec
from .extensions.mcp_user import McpUser
from .extensions.programs import Programs
from .eyes import session as eyes
from .eyes import sources
from .eyes.definitions import ServerDefinition
from .eyes.session import OwnLanguageServers
from .history.checkpoints import ShadowRepository, checkpoints_for
from .history.sessions import SessionInfo, SessionStore
from .history.undo import Editor, UndoResult, undo
from .interfaces import Approver, LanguageServers, Model, Progress, Shell, Workspace
from .models import providers
from .models.anthropic import AnthropicModel, ClientCache
from .models.chat import ChatModel
from .models.costs import Price, count, describe, price_of
from .permissions.modes import SessionMode
from .permissions.settings import project_rules
from .settings.assembly import Settings
from .shell import launch, sandbox
from .shell.subprocess_shell import RefusingShell, SubprocessShell
from .tools import OWN_NAVIGATION, ToolContext

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class TaskSetup:
    """The model and the shell for one task, and the secrets neither may show.

    `warning` says why bash runs unsandboxed, or not at all, when the settings asked for a
    sandbox; a front end shows it once per session."""

    model: AnthropicModel | ChatModel
    shell: Shell
    settings: Settings
    secrets: tuple[str, ...]
    warning: str | None = None
    project: ProjectSettings = field(default_factory=ProjectSettings)
    """What the repository's own files ask for (deny and ask rules, hooks, MCP servers,
    subagent definitions)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The model client's environment: a subagent's model on another provider needs it."""
    clients: ClientCache | None = None

    def agent(
        self,
        workspace: Workspace,
        approver: Approver,
        progress: Progress,
        conversation: Conversation,
        extra_tools: frozenset[str] = frozenset(),
        language: LanguageServers | None = None,
        mode: SessionMode | None = None,
        mcp_servers: tuple[ServerSpec, ...] = (),
        notify: Callable[[str], None] | None = None,
        mcp_user: McpUser | None = None,
        servers: SessionServers | None = None,
    ) -> Agent:
        """The task's agent, offered the core tools and those of `extra_tools` (names from
        `tools.OPTIONAL_TOOLS`) that the front end can serve (the editor's eyes through
        `language`), in the session's `mode` (default: the `mode` setting). The project
        memory is read now, so each task sees its changes. Outside the LSP door, agentls's
        own language servers are the session's `servers` (kept between its tasks), else the
        task's own, stopped as it ends."""
        tools = ToolContext(
            workspace=workspace,
            shell=self.shell,
            approver=approver,
            settings=self.settings,
            secrets=self.secrets,
            extra_tools=extra_tools,
            progress=progress,
            language=language,
            mode=mode or SessionMode(self.settings.mode),
            project_rules=project_rules(self.project.permissions)[0],
        )
        tools.hooks = extensions = TaskExtensions(
            workspace.root,
            self.settings,
            self.project,
            (*self.settings.mcp_servers, *mcp_servers),
            approver,
            lambda: conversation.id,
            notify or (lambda message: progress.notice(f"agentls: {message}")),
            mcp_user,
            programs=Programs.of(workspace.root, self.settings),
        )
        extensions.context = tools  # the skills' catalog joins once the task starts (submitted)
        memory = ProjectMemory.load(workspace.root, environment.config_dir(), self.secrets)
        checkpoints = checkpoints_for(workspace.root)
        limits = loop_limits(self.settings)
        # Outside the LSP door (no editor to ask): agentls's own eyes, if any are found.
        if language is not None:
            own = None
        elif servers is not None:
            own = servers.for_task(workspace, self.settings, extensions)
        else:
            own = own_servers(workspace, self.settings, extensions)
        tools.own_servers = own
        if own is not None and own.navigates():
            tools.extra_tools = extra_tools | OWN_NAVIGATION
        agent = Agent(
            self.model,
            tools,
            progress,
            conversation,
            limits,
            memory,
            checkpoints,
            on_end=own.close if own and servers is None else None,
        )

        def definitions() -> dict[str, Definition]:
            """Read once the task's project approvals are through (`submitted`): the user's
            own, their plugins' (`plugin:name`), the project's approved ones."""
            user, problems = agent_definitions.parsed(user_definitions())
            plugged, wrong = agent_definitions.plugin_definitions(extensions.plugins)
            for problem in (*problems, *wrong):
                extensions.notify(problem)
            project = approved_agents(self.project, extensions.trust)
            return agent_definitions.offered([*user, *plugged], project)

        delegate(agent, definitions, self.subagent_model)
        return agent

    def subagent_model(self, spec: str) -> tuple[Model, str]:
        """A definition's `model`: Claude Code's aliases (sonnet, opus, haiku) mean the task's
        own; a provider profile's name, that provider with its default model; anything else
        a model id on the task's provider. Raises ModelError."""
        if spec in ("sonnet", "opus", "haiku"):
            return self.model, self.model.name
        if spec in providers.PROFILES:
            endpoint = providers.endpoint(spec, None, self.env)
            name = providers.model_id(endpoint.profile, None, {})
            clients = self.clients or ClientCache()
            adapter = ChatModel if endpoint.profile.wire == "openai" else AnthropicModel
            settings = self.settings
            built = adapter(
                clients.get(endpoint),
                name,
                settings.max_tokens,
                endpoint,
                self.env,
                settings.request_timeout,
            )
            built.web_search = settings.web_search and endpoint.profile.wire == "anthropic"
            return built, name
        return self.model.renamed(spec), spec

    @property
    def price(self) -> Price | None:
        return price_of(self.model.name, self.settings.prices)

    def outcome(self, result: TaskResult) -> str:
        return outcome(result, self.price, self.settings.prices)


def outcome(
    result: TaskResult, price: Price | None, prices: tuple[tuple[str, Price], ...] = ()
) -> str:
    """One line a person reads, the same in every door: how the task ended, what it did and
    what it cost (no cost without a price), its subagents' share of the tokens included:
    `done · 8 steps · 2 edits · 2 subagents 38k tokens · 61k tokens (65 % cached) · $0.09`."""
    edits = counted(result.edits_applied, "edit")
    if result.edits_partly:
        edits += f" ({result.edits_partly} in part)"
    parts = [result.status.replace("_", " "), counted(result.steps, "step"), edits]
    if result.edits_rejected:
        parts.append(f"{result.edits_rejected} rejected")
    if result.subagents:
        theirs = result.subagents_usage()
        share = count(theirs.prompt + theirs.output)
        parts.append(f"{counted(len(result.subagents), 'subagent')} {share} tokens")
    return " · ".join([*parts, describe(result.usage, price, result.cost(price, prices))])


def own_servers(
    workspace: Workspace, settings: Settings, extensions: TaskExtensions
) -> OwnLanguageServers | None:
    """The language servers of the `lspServers` setting, of the user's plugins, the
    built-in ones found on PATH, and the repository's `.lsp.json` ones the user approves
    when the task starts; None when there are none. Each starts on the first file of its
    kind (`eyes/server.py`: confined)."""
    plugged, problems = sources.from_plugins(extensions.plugins)
    project = extensions.project.lsp_servers
    for problem in (*problems, *sources.from_project(project)[1]):
        extensions.notify(problem)
    found = eyes.definitions((*settings.lsp_servers, *plugged), workspace.root)
    if not found and not project:
        return None
    programs = Programs.of(workspace.root, settings)
    return OwnLanguageServers(
        workspace.root,
        found,
        programs,
        workspace.read_text,
        extensions.notify,
        _approved(settings, extensions, found),
    )


def _approved(
    settings: Settings, extensions: TaskExtensions, found: tuple[ServerDefinition, ...]
) -> Callable[[], Iterable[ServerDefinition]]:
    """The repository's `.lsp.json` servers the task's user approves, read on its first file."""
    # A name the user gave a server of theirs, disabled too, is never the repository's.
    taken = [d.name for d in (*settings.lsp_servers, *found)]
    return lambda: sources.approved(extensions.project.lsp_servers, extensions.trust, taken)


class SessionServers:
    """agentls's own language servers for a session of several tasks (an interactive run,
    an ACP connection): made by the first task that finds any, one set per workspace, kept
    warm for the next tasks (pyright's cold start paid once), stopped by `close`."""

    def __init__(self) -> None:
        self._by_root: dict[Path, OwnLanguageServers] = {}

    def for_task(
        self, workspace: Workspace, settings: Settings, extensions: TaskExtensions
    ) -> OwnLanguageServers | None:
        own = self._by_root.get(workspace.root)
        if own is None:
            own = own_servers(workspace, settings, extensions)
            if own is not None:
                self._by_root[workspace.root] = own
            return own
        later = _approved(settings, extensions, ())
        own.next_task(workspace.read_text, extensions.notify, later)
        return own

    async def close(self) -> None:
        """Stop every server of the session (each within its `shutdownTimeout`)."""
        running, self._by_root = list(self._by_root.values()), {}
        await asyncio.gather(*(own.close() for own in running))


def user_definitions() -> dict[str, str]:
    """The user's subagent definitions by path: agentls's own folder's, then Claude Code's
    (the first of a name wins)."""
    folders = (environment.config_dir() / "agents", Path.home() / ".claude" / "agents")
    return {path: text for folder in folders for path, text in read_folder(folder).items()}


def loop_limits(settings: Settings) -> LoopLimits:
    # The window is resolved by model in prepare_task; 200k for a bare loop.
    window = settings.context_window or 200_000
    return LoopLimits(settings.max_steps, window, settings.context_budget)


def prepare_task(root: Path, settings: Settings, clients: ClientCache) -> TaskSetup:
    """Raises ModelError for an unknown provider, a missing key or a missing model id."""
    loaded = environment.load(root)
    env, secrets = loaded.client, loaded.secrets
    endpoint = providers.endpoint(settings.provider, settings.base_url, env)
    wire = endpoint.profile.wire
    name = providers.model_id(endpoint.profile, settings.model, env)
    if settings.context_window is None:
        settings = replace(settings, context_window=providers.context_window(name, wire))
    if settings.vision is None:
        settings = replace(settings, vision=endpoint.profile.vision)
    adapter = ChatModel if wire == "openai" else AnthropicModel
    shell, warning = _shell(root, settings, secrets)
    if settings.web_search and not endpoint.profile.web_search:
        # Said once per session, as the sandbox's warning is: the setting does nothing here.
        no_search = endpoint.profile.no_web_search
        warning = f"{warning} {no_search}" if warning else no_search
    model = adapter(
        clients.get(endpoint),
        name,
        settings.max_tokens,
        endpoint,
        env,
        settings.request_timeout,
    )
    model.web_search = settings.web_search and endpoint.profile.web_search
    return TaskSetup(
        model=model,
        shell=shell,
        settings=settings,
        secrets=secrets,
        warning=warning,
        project=project_settings.load(root),
        env=env,
        clients=clients,
    )


def _shell(root: Path, settings: Settings, secrets: tuple[str, ...]) -> tuple[Shell, str | None]:
    """The shell the settings ask for, and why it is not sandboxed when it should be."""
    # The allow-listed part of the server's environment, never the .env files' values.
    env = launch.environment(settings.pass_environment)
    if settings.sandbox == "off":
        return SubprocessShell(root, env, secrets), None
    found = sandbox.find()
    if not isinstance(found, sandbox.Unavailable):
        return SubprocessShell(root, env, secrets, found, settings.sandbox_network), None
    if settings.sandbox == "required":
        return RefusingShell(found.reason), (
            f'bash is off: the setting sandbox is "required", and {found.reason}.'
        )
    return SubprocessShell(root, env, secrets), (
        f'bash runs without a sandbox: {found.reason}. Set agentls.sandbox to "required" to '
        'refuse bash then, or to "off" to silence this.'
    )


def new_conversation(root: Path) -> Conversation:
    """A conversation saved as it goes in the folder's store, which every door shares (so
    any door lists and resumes it); unsaved when the store cannot be written."""
    try:
        return Conversation(journal=SessionStore(root).create())
    except OSError as error:  # the tasks run, unsaved
        log.warning("the session cannot be saved: %s", error)
        return Conversation()


def resumed_conversation(store: SessionStore, session_id: str) -> tuple[Conversation, SessionInfo]:
    """The saved conversation `session_id` of the store, to go on with. Raises KeyError
    for an unknown id."""
    journal, stored = store.open(session_id)
    conversation = Conversation.resumed(
        stored.messages, journal, stored.info.tasks, stored.last_request
    )
    return conversation, stored.info


async def undo_and_tell(
    root: Path, editor: Editor, target: int | None, overwrite: list[str], current: Conversation
) -> UndoResult:
    """Undo to a checkpoint (the last task's with None) and tell the model what was undone
    (`tell_the_model`). Raises CheckpointError, or OSError when files cannot be put back."""
    repository = ShadowRepository(root)
    result = await undo(repository, editor, target, overwrite, current.id, current.tasks)
    try:
        tell_the_model(result, current, SessionStore(root))
    except OSError as error:  # the files are back; only the note is lost
        log.warning("the undo could not be noted in the session: %s", error)
    return result


def tell_the_model(result: UndoResult, current: Conversation, store: SessionStore) -> None:
    """The model hears what was undone at its next task: in the conversation going on, or,
    when none is (a restarted editor, the terminal), in the saved session of the undone
    task, which a resume picks up."""
    if not (result.restored or result.removed):
        return
    note = [agentls_note(result.note())]
    if current.messages or current.journal is not None:
        current.add_user(note)
        current.save()
        return
    try:
        saved, _ = resumed_conversation(store, result.target.session or store.latest() or "")
    except KeyError:
        return
    saved.add_user(note)
    saved.save()
