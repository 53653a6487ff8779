"""Putting a task's agent together from the settings and the environment, the same way for
every front end; each brings its own workspace, approver and progress."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import environment
from .agent import Agent, Session, TaskResult
from .costs import Price, describe, price_of, report
from .interfaces import Approver, Progress, Workspace
from .model import AnthropicModel, ClientCache
from .settings import DEFAULT_MODEL, Settings
from .shell import SubprocessShell
from .tools import ToolContext


@dataclass
class TaskSetup:
    """The model and the shell for one task, and the secrets neither may show."""

    model: AnthropicModel
    shell: SubprocessShell
    settings: Settings
    secrets: tuple[str, ...]

    def agent(
        self, workspace: Workspace, approver: Approver, progress: Progress, session: Session
    ) -> Agent:
        tools = ToolContext(workspace, self.shell, approver, self.settings, self.secrets)
        return Agent(self.model, tools, progress, session)

    @property
    def price(self) -> Price | None:
        return price_of(self.model.name, self.settings.prices)

    def result(self, result: TaskResult) -> dict[str, Any]:
        """The task's result for a front end, its usage priced."""
        return {**result.as_dict(), "usage": report(result.usage, self.model.name, self.price)}

    def outcome(self, result: TaskResult) -> str:
        """One line: how the task ended and what it cost."""
        return (
            f"{result.status}: {result.steps} steps, {result.edits_applied} edits applied, "
            f"{result.edits_rejected} rejected, {describe(result.usage, self.price)}"
        )


def prepare_task(root: Path, settings: Settings, clients: ClientCache) -> TaskSetup:
    """Raises ModelError when no API key is set."""
    loaded = environment.load(root)
    env, secrets = loaded.client, loaded.secrets
    client = clients.get(env)
    name = settings.model or env.get("AGENTLS_MODEL") or DEFAULT_MODEL
    return TaskSetup(
        AnthropicModel(client, name, settings.max_tokens, env, settings.request_timeout),
        # The server's own environment, never the .env files' values, and no secrets.
        SubprocessShell(root, environment.scrubbed(os.environ), secrets),
        settings,
        secrets,
    )
