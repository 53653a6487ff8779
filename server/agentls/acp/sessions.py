"""ACP sessions (one conversation and workspace root each): prompts run as tasks on the same
loop as the other front ends, cancel, the modes, the saved sessions listed and loaded."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    BlobResourceContents,
    ClientCapabilities,
    CloseSessionResponse,
    ConfigOptionUpdate,
    Cost,
    CurrentModeUpdate,
    DeleteSessionResponse,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionInfo,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    TextContentBlock,
    TextResourceContents,
    UnstructuredCommandInput,
    Usage,
    UsageUpdate,
)

from .. import images
from ..agent.conversation import Conversation
from ..agent.task_result import TaskResult
from ..extensions.commands import for_workspace
from ..extensions.mcp_config import ServerSpec, from_acp
from ..history.sessions import SessionStore, delete_anywhere
from ..interfaces import ModelError
from ..models.anthropic import ClientCache, load_sdk
from ..permissions import modes
from ..settings.assembly import Settings
from ..settings.user import load as load_user_settings
from ..wiring import (
    SessionServers,
    TaskSetup,
    new_conversation,
    prepare_task,
    resumed_conversation,
)
from . import auth, errors, options
from .approver import AcpApprover
from .mcp_user import AcpMcpUser
from .progress import AcpProgress
from .replay import replay
from .updates import Updates
from .workspace import AcpWorkspace

log = logging.getLogger(__name__)

ALWAYS = "always"
"""The ACP mode beside agentls's own (`permissions.modes`): acceptEdits, commands unasked."""
ALWAYS_WORDS = "Edits land without review (checkpointed); commands run without asking."
MODE_WORDS: dict[str, str] = {
    **{mode: words for mode, words in modes.MODES.items()},
    ALWAYS: ALWAYS_WORDS,
}
"""The modes offered, as `modes` and as the `mode` config option alike."""
MODES = SessionModeState(
    current_mode_id="default",
    available_modes=[
        SessionMode(id=mode, name=mode, description=text) for mode, text in MODE_WORDS.items()
    ],
)
CLOSE_WAIT = 8.0
"""Seconds `session/close` waits for the running prompt to end (its command killed)."""
STOP_REASONS: dict[str, StopReason] = {
    "done": "end_turn",
    "cancelled": "cancelled",
    "step_limit": "max_turn_requests",
}


@dataclass(kw_only=True)
class AcpSession:
    id: str
    root: Path
    mode: modes.SessionMode = field(default_factory=modes.SessionMode)
    mcp_servers: tuple[ServerSpec, ...] = ()
    """The client's (its user's) MCP servers, from `session/new`."""
    commands_always: bool = False
    """Commands run unasked: the `always` mode, or "Allow always" answered once."""
    conversation: Conversation = field(default_factory=Conversation)
    running: asyncio.Task[TaskResult] | None = None
    warned: bool = False
    notes: list[str] = field(default_factory=list)
    """Said once, at the start of the next answer (what the session ignored, say)."""
    commands: list[AvailableCommand] | None = None
    """The `/` commands last sent to the client (`available_commands_update`)."""
    model: str | None = None
    """The model picked in the session (`session/set_config_option`); None: the settings'."""
    cost: float | None = 0.0
    """Dollars the session's prompts cost so far; None once one had no price."""
    in_context: int = 0
    """Tokens the context held after the last model request that ended (the meter's `used`)."""

    def allow_always(self) -> None:
        self.commands_always = True

    @property
    def mode_id(self) -> str:
        # "Allow always" on a command in default mode leaves edits reviewed: still default.
        unasked = self.commands_always and self.mode.current == "acceptEdits"
        return ALWAYS if unasked else self.mode.current


def prompt_text(blocks: list[Any]) -> str:
    """The user's prompt as one task text: typed text, and the files they attached."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'<attached uri="{resource.uri}">\n{resource.text}\n</attached>')
            elif not _is_image(resource.mime_type):  # an image goes as itself (prompt_images)
                parts.append(f'<attached uri="{resource.uri}">(binary, not shown)</attached>')
        elif isinstance(block, ResourceContentBlock):
            parts.append(f'<attached uri="{block.uri}">(not included; read it)</attached>')
    return "\n\n".join(part for part in parts if part.strip())


def _is_image(mime_type: str | None) -> bool:
    return bool(mime_type and mime_type.startswith("image/"))


def prompt_images(blocks: list[Any]) -> list[images.Image]:
    """The prompt's images (we declare `promptCapabilities.image`): image blocks, and
    embedded image resources; each checked and scaled as a file is (CPU work: a thread)."""
    found: list[images.Image] = []
    for block in blocks:
        if isinstance(block, ImageContentBlock):
            name = block.uri or f"image {len(found) + 1}"
            found.append(images.from_base64(name, block.data, block.mime_type))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, BlobResourceContents) and _is_image(resource.mime_type):
                found.append(images.from_base64(resource.uri, resource.blob, resource.mime_type))
    return found


class AcpSessions:
    """The sessions of one connection: what every request but `initialize` needs (the loop,
    the tools, the store), loaded once the client has been answered (`agent.AcpAgent`)."""

    def __init__(self, client: Any, capabilities: ClientCapabilities | None) -> None:
        self.client = client
        self.capabilities = capabilities
        self.sessions: dict[str, AcpSession] = {}
        self.clients = ClientCache()
        self._pending: asyncio.Future[None] | None = None
        self.servers = SessionServers()
        """agentls's own language servers, for every prompt of the connection."""

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None) -> NewSessionResponse:
        root = _root(cwd)
        session = self._open(root, new_conversation(root), mcp_servers)
        self._later(session)
        return NewSessionResponse(
            session_id=session.id, modes=_modes(session.mode_id), config_options=_options(session)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None
    ) -> LoadSessionResponse:
        session = self._resume(cwd, session_id, mcp_servers)
        updates = Updates(self.client, session.id)
        replay(session.conversation.messages, updates)
        await updates.flush()
        self._later(session)
        return LoadSessionResponse(modes=_modes(session.mode_id), config_options=_options(session))

    async def resume_session(
        self, session_id: str, cwd: str, mcp_servers: list[Any] | None
    ) -> ResumeSessionResponse:
        session = self._resume(cwd, session_id, mcp_servers)
        self._later(session)
        return ResumeSessionResponse(
            modes=_modes(session.mode_id), config_options=_options(session)
        )

    async def list_sessions(self, cwd: str | None) -> ListSessionsResponse:
        if cwd is None:
            raise errors.invalid_params("session/list needs a cwd: sessions are kept per folder")
        root = _root(cwd)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=str(root),
                    title=info.title,
                    updated_at=datetime.fromtimestamp(info.updated, timezone.utc).isoformat(),
                )
                for info in _store(root).list_sessions()
            ]
        )

    def _resume(self, cwd: str, session_id: str, mcp_servers: list[Any] | None) -> AcpSession:
        root = _root(cwd)
        running = self.sessions.get(session_id)
        if running is not None and running.running is not None and not running.running.done():
            raise errors.invalid_request("that session is running a prompt; cancel it first")
        try:
            conversation, _ = resumed_conversation(_store(root), session_id)
        except (KeyError, ValueError):
            raise errors.invalid_params(
                f"no saved session {session_id} in {root}", sessionId=session_id
            ) from None
        return self._open(root, conversation, mcp_servers)

    def _open(
        self, root: Path, conversation: Conversation, mcp_servers: list[Any] | None
    ) -> AcpSession:
        session = AcpSession(id=conversation.id, root=root, conversation=conversation)
        session.mcp_servers = from_acp(mcp_servers or [])
        self.sessions[session.id] = session
        return session

    def _later(self, session: AcpSession) -> None:
        """The session's commands, sent once the client knows the session (after the
        answer that names it)."""

        async def send() -> None:
            await asyncio.sleep(0)
            updates = Updates(self.client, session.id)
            self._commands(session, updates)
            await updates.flush()

        self._pending = asyncio.ensure_future(send())

    def _commands(self, session: AcpSession, updates: Updates) -> None:
        """Send the `/` commands (skills, commands, the approved project's, the MCP servers'
        prompts: the registry's, as every door's) if they changed since last sent."""
        settings, _ = load_user_settings()
        commands = [
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=command.hint))
                if command.hint
                else None,
            )
            for command in for_workspace(session.root, settings.plugins).listing()
        ]
        if commands != session.commands:
            session.commands = commands
            updates.send(
                AvailableCommandsUpdate(
                    session_update="available_commands_update", available_commands=commands
                )
            )

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise errors.invalid_params(f"no session {session_id}", sessionId=session_id)
        return session

    async def set_session_mode(self, session_id: str, mode_id: str) -> SetSessionModeResponse:
        _set_mode(self._session(session_id), mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, session_id: str, config_id: str, value: str | bool
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if not isinstance(value, str):
            raise errors.invalid_params(f"{config_id} takes a value id", configId=config_id)
        if config_id == options.MODEL:
            settings, _ = load_user_settings()
            session.model = options.checked_model(value, settings)
        elif config_id == options.MODE:
            _set_mode(session, value)
        else:
            raise errors.invalid_params(f"no config option {config_id!r}", configId=config_id)
        return SetSessionConfigOptionResponse(config_options=_options(session))

    async def prompt(self, session_id: str, prompt: list[Any]) -> PromptResponse:
        session = self._session(session_id)
        if session.running is not None and not session.running.done():
            raise errors.invalid_request(
                "a prompt is already running in this session; cancel it first"
            )
        task = prompt_text(prompt)
        attached = await asyncio.to_thread(prompt_images, prompt)
        if not task.strip() and not attached:
            raise errors.invalid_params("the prompt has no text")
        task = task if task.strip() else "(The user sent the image(s) above without words.)"
        updates = Updates(self.client, session.id)
        for note in session.notes:
            updates.send(acp.update_agent_message_text(note))
        session.notes.clear()
        always = "always" if session.commands_always else None
        settings, problems = load_user_settings(approveCommands=always)
        if session.model is not None:
            settings = replace(settings, model=session.model)
        if (hint := auth.missing_key()) is not None:
            await updates.flush()
            raise errors.auth_required(hint)
        for problem in problems:
            updates.send(acp.update_agent_message_text(f"(agentls: {problem})\n\n"))
        await load_sdk(settings.provider)
        try:
            setup = prepare_task(session.root, settings, self.clients)
        except ModelError as error:
            await updates.flush()
            raise errors.failed(f"{error} {error.hint}".strip()) from None
        if setup.warning and not session.warned:
            # Once per session, as the other doors do: why bash is not sandboxed.
            session.warned = True
            updates.send(acp.update_agent_message_text(f"(agentls: {setup.warning})\n\n"))
        progress = AcpProgress(updates, session.root)
        approver = AcpApprover(self.client, session.id, progress, session)
        workspace = AcpWorkspace(
            self.client, session.id, session.root, self.capabilities, updates, approver
        )
        agent = setup.agent(
            workspace,
            approver,
            progress,
            session.conversation,
            mode=session.mode,
            mcp_servers=session.mcp_servers,
            mcp_user=AcpMcpUser(
                self.client, session.id, self.capabilities, updates, approver.asking
            ),
            servers=self.servers,
        )
        before = session.mode_id
        session.running = asyncio.ensure_future(agent.run(task, images=attached))
        try:
            result = await session.running
        finally:
            session.running = None
        progress.end_open_step(result.status)
        updates.send(_usage_update(session, setup, result))
        # The project's, once approved in this task; the MCP servers' prompts, once started.
        self._commands(session, updates)
        if session.mode_id != before:  # an approved plan switched to default
            _mode_moved(session, updates)
        await updates.flush()
        return _answer(result, setup.outcome(result))

    async def cancel(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.running is not None:
            session.running.cancel()

    async def close_session(self, session_id: str) -> CloseSessionResponse:
        session = self.sessions.pop(session_id, None)
        running = session.running if session is not None else None
        if running is not None:
            running.cancel()
            # The prompt answers `cancelled` once the loop has ended its step and killed the
            # step's command: the client hears of the close after that, not before.
            await asyncio.wait([running], timeout=CLOSE_WAIT)
        return CloseSessionResponse()

    async def close(self) -> None:
        """The connection is over (the client closed it): each running prompt cancelled
        and awaited (its command killed, its answer sent while the SDK can still send
        it), then the language servers stopped."""
        running = [s.running for s in self.sessions.values() if s.running is not None]
        for prompt in running:
            prompt.cancel()
        if running:
            await asyncio.wait(running, timeout=CLOSE_WAIT)
        await self.servers.close()

    async def delete_session(self, session_id: str) -> DeleteSessionResponse:
        await self.close_session(session_id)
        try:
            delete_anywhere(session_id)
        except KeyError:
            raise errors.invalid_params(
                f"no saved session {session_id}", sessionId=session_id
            ) from None
        except OSError as error:
            raise errors.failed(f"could not delete the session: {error}") from None
        return DeleteSessionResponse()


def _root(cwd: str) -> Path:
    root = Path(cwd)
    if not root.is_absolute() or not root.is_dir():
        raise errors.invalid_params(f"not an absolute folder: {cwd}", cwd=cwd)
    return root


def _store(root: Path) -> SessionStore:
    try:
        return SessionStore(root)
    except OSError as error:
        raise errors.failed(f"the session store: {error}") from None


def _modes(current: str) -> SessionModeState:
    return MODES.model_copy(update={"current_mode_id": current})


def _set_mode(session: AcpSession, mode_id: str) -> None:
    if session.running is not None and not session.running.done():
        raise errors.invalid_request("switch modes while idle")
    try:
        session.mode.current = "acceptEdits" if mode_id == ALWAYS else modes.mode_of(mode_id)
    except ValueError as error:
        raise errors.invalid_params(str(error), modeId=mode_id) from None
    session.commands_always = mode_id == ALWAYS


def _options(session: AcpSession) -> list[Any]:
    """The session's config options, with their current values."""
    settings: Settings = load_user_settings()[0]
    model = session.model or options.configured_model(settings)
    return [
        options.model_option(model, settings),
        options.mode_option(session.mode_id, MODE_WORDS),
    ]


def _usage_update(session: AcpSession, setup: TaskSetup, result: TaskResult) -> UsageUpdate:
    """The context meter: what the context holds after the task's last request (its prompt
    and its reply), of the window in force; and what the session's prompts have cost."""
    last = result.last_turn
    if last.prompt:  # else no request ended (a cancel before the reply): as it was
        session.in_context = last.prompt + last.output
    cost = result.cost(setup.price, setup.settings.prices)
    session.cost = None if cost is None or session.cost is None else session.cost + cost
    return UsageUpdate(
        session_update="usage_update",
        used=session.in_context,
        size=setup.settings.context_window or 0,
        cost=None if session.cost is None else Cost(amount=session.cost, currency="USD"),
    )


def _usage(result: TaskResult) -> Usage:
    usage = result.usage
    return Usage(
        total_tokens=usage.prompt + usage.output,
        input_tokens=usage.prompt,
        output_tokens=usage.output,
        cached_read_tokens=usage.cache_read,
        cached_write_tokens=usage.cache_write,
    )


def _mode_moved(session: AcpSession, updates: Updates) -> None:
    """The session's mode changed during the prompt: both of the client's pickers hear it."""
    updates.send(
        CurrentModeUpdate(session_update="current_mode_update", current_mode_id=session.mode_id)
    )
    # A client that draws the `mode` option rather than `modes` hears it too.
    updates.send(
        ConfigOptionUpdate(session_update="config_option_update", config_options=_options(session))
    )


def _answer(result: TaskResult, outcome: str) -> PromptResponse:
    """The prompt's answer, or its error: the outcome line is metadata beside the usage, not
    words of the answer."""
    meta = {"agentls": {"outcome": outcome}}
    if result.refused:
        return PromptResponse(stop_reason="refusal", usage=_usage(result), field_meta=meta)
    if result.status == "failed":
        raise errors.failed(f"{result.summary} {result.error_hint}".strip(), **meta["agentls"])
    stop = STOP_REASONS[result.status]
    return PromptResponse(stop_reason=stop, usage=_usage(result), field_meta=meta)
