"""One task in a tree of its own, headless: make the tree at the base, provision it (the
setup command), run the agent as `agentls run -p` would with nobody to ask, commit what it
changed on a branch, run the test command, remove the tree. The engines call this in their
workers; nothing here knows of batches, journals or other tasks.

Nobody is asked, so the policy is fixed: edits are written (but one a permission rule asks
about), commands run only in the sandbox, whatever the settings say (without one, none
runs, and the setup and test commands neither: the task says so), the network is off unless
the spec says otherwise (and web_fetch with it, which runs outside the sandbox). The
model's key is read where agentls reads it: this process's environment and
`~/.config/agentls/.env`; it never travels in a spec.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..agent.conversation import Conversation
from ..agent.event_progress import EventProgress
from ..agent.task_json import task_json
from ..interfaces import Command, ModelError, ShellRefused
from ..models.anthropic import ClientCache
from ..permissions.modes import SessionMode
from ..permissions.rules import Rule, Rules
from ..settings.user import load as load_user_settings
from ..wiring import TaskSetup, prepare_task
from . import worktree
from .adapters import BatchApprover, BatchWorkspace, Events
from .spare_trees import SpareTrees

COMMAND_TIMEOUT = 3600.0
"""Seconds a setup or test command may take when the task sets no timeout."""

OUTPUT_KEPT = 20_000
"""Characters of a setup or test command's output kept in the trajectory."""


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    """All a worker needs to run one task (JSON-able: it crosses processes and machines)."""

    id: str
    repo: str
    prompt: str
    branch: str
    tree: str
    """Where the task's tree is made (removed first if a dead attempt left one)."""
    base: str | None = None
    setup: str | None = None
    test: str | None = None
    max_steps: int | None = None
    timeout: float | None = None
    sandbox_network: bool = False
    shared: bool = False
    """A `git clone --shared` instead of a worktree."""
    keep_tree: bool = False
    provider: str | None = None
    model: str | None = None
    settings: dict[str, Any] | None = None
    """More of the settings object (camelCase) over the user's file, such as an editor's
    (a background task's): the fixed policy below still wins."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TaskSpec:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in known})


@dataclass(kw_only=True)
class TaskOutcome:
    """How a task ended, and what it left (JSON-able)."""

    id: str
    status: str
    """done | failed | error | timeout | cancelled"""
    steps: int = 0
    tokens: int = 0
    cost: float | None = None
    branch: str | None = None
    commit: str | None = None
    patch: str = ""
    patch_sha256: str | None = None
    test_exit: int | None = None
    node: str = field(default_factory=socket.gethostname)
    seconds: float = 0.0
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    rate_limited: list[float] = field(default_factory=list)
    """Each 429 the provider answered: the seconds its Retry-After asked for (0: none)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TaskOutcome:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in known})


Live = Callable[[dict[str, Any]], None]
"""Where a worker sends what happens as it happens: steps, and 429s (`{"type":
"rate_limited", "seconds": ...}`), so the driver can slow down before the task ends."""


class TaskRun:
    """One task, run once; `cancel()` stops it (the outcome then says `cancelled`)."""

    def __init__(
        self, spec: TaskSpec, live: Live | None = None, spares: SpareTrees | None = None
    ) -> None:
        self.spec = spec
        self.live = live
        self.spares = spares
        """Where a warm worker keeps its trees between tasks; None: each made and removed."""
        self.events = Events(live)
        self.outcome = TaskOutcome(id=spec.id, status="error")
        self._task: asyncio.Task[Any] | None = None
        self._deadline = float("inf")

    def cancel(self) -> None:
        """Stop the task wherever it is (its outcome says `cancelled`)."""
        if self._task is not None:
            self._task.cancel()

    async def run(self) -> TaskOutcome:
        started = time.monotonic()
        self._task = asyncio.current_task()
        if self.spec.timeout:
            self._deadline = started + self.spec.timeout
        outcome = self.outcome
        clients = ClientCache()
        tree: worktree.Tree | None = None
        try:
            tree = await asyncio.to_thread(
                self.spares.make if self.spares else worktree.make,
                Path(self.spec.repo),
                self.spec.base,
                Path(self.spec.tree),
                self.spec.shared,
            )
            self.events.send("tree", path=str(tree.path), base=tree.base)
            await asyncio.to_thread(self.provision, tree)
            await self._run_in(tree, clients)
        except (worktree.TreeError, ModelError, OSError) as error:
            outcome.status, outcome.error = "error", _words(error)
        except asyncio.CancelledError:
            outcome.status = "cancelled"
        finally:
            with contextlib.suppress(Exception):
                await clients.close()
            if tree is not None and not self.spec.keep_tree:
                await asyncio.to_thread(self._let_go, tree)
        outcome.seconds = round(time.monotonic() - started, 3)
        outcome.events = self.events.events
        return outcome

    def _let_go(self, tree: worktree.Tree) -> None:
        if self.spares is not None:
            self.spares.keep(tree)
        else:
            worktree.remove(tree.repository, tree.path)

    def provision(self, tree: worktree.Tree) -> None:
        """Fill the fresh tree before the setup command runs: nothing for a batch's task; a
        background task copies the user's ignored files (`agentls.background`)."""

    def adapters(self, tree: worktree.Tree) -> tuple[BatchWorkspace, BatchApprover]:
        """The loop's workspace and approver: nobody to ask (a background task words the
        refusals for its review)."""
        return BatchWorkspace(tree.path, self.events), BatchApprover()

    def _left(self) -> float | None:
        left = self._deadline - time.monotonic()
        return None if left == float("inf") else max(left, 0.0)

    async def _run_in(self, tree: worktree.Tree, clients: ClientCache) -> None:
        spec, outcome = self.spec, self.outcome
        setup = self._prepare(tree.path, clients)
        if setup.warning:
            self.events.send("warning", text=setup.warning)
        before = await asyncio.to_thread(worktree.base_tree, tree)
        if spec.setup:
            exit_code = await self._command(setup, spec.setup, "setup")
            if exit_code != 0:
                outcome.status = "error"
                outcome.error = f"the setup command failed (exit {exit_code})"
                return
            before = await asyncio.to_thread(worktree.snapshot, tree)
        status = await self._agent(setup, tree)
        outcome.status = status
        if status == "cancelled":
            return
        after = await asyncio.to_thread(worktree.snapshot, tree)
        patch = await asyncio.to_thread(worktree.diff, tree, before, after)
        message = f"agentls: {spec.id}\n\n{spec.prompt[:4000]}\n\nstatus: {status}\n"
        outcome.commit = await asyncio.to_thread(worktree.commit, tree, patch, spec.branch, message)
        outcome.branch, outcome.patch = spec.branch, patch
        outcome.patch_sha256 = worktree.sha256(patch)
        if spec.test and status != "timeout":
            outcome.test_exit = await self._command(setup, spec.test, "test")

    def _prepare(self, root: Path, clients: ClientCache) -> TaskSetup:
        spec = self.spec
        fixed = dict(
            approveCommands="always",
            # Never unsandboxed, whatever the user's file says: nobody watches.
            sandbox="required",
            sandboxNetwork=spec.sandbox_network,
            approvedCommandsUnsandboxed=False,
            mode="acceptEdits",
            maxSteps=spec.max_steps,
            provider=spec.provider,
            model=spec.model,
        )
        settings, problems = load_user_settings(**{**(spec.settings or {}), **fixed})
        for problem in problems:
            self.events.send("warning", text=problem)
        if not spec.sandbox_network:
            # web_fetch reaches the network from this process, outside the sandbox: with the
            # network off it is denied, as a rule would (`permissions/decide.py`).
            offline = Rules(deny=(Rule("web_fetch"),))
            settings = replace(settings, permissions=settings.permissions + offline)
        setup = prepare_task(root, settings, clients)
        _watch_rate_limits(setup.model.client, self._rate_limited)
        return setup

    def _rate_limited(self, seconds: float) -> None:
        self.outcome.rate_limited.append(seconds)
        if self.live is not None:
            self.live({"type": "rate_limited", "seconds": seconds})

    async def _agent(self, setup: TaskSetup, tree: worktree.Tree) -> str:
        workspace, approver = self.adapters(tree)
        agent = setup.agent(
            workspace,
            approver,
            EventProgress(self.events),
            Conversation(),
            mode=SessionMode("acceptEdits"),
        )
        job = asyncio.ensure_future(agent.run(self.spec.prompt))
        try:
            done, _ = await asyncio.wait({job}, timeout=self._left())
        except asyncio.CancelledError:
            # The loop answers a cancel itself (the shell's process group killed): wait
            # for it, so nothing of the task runs on once it is reported cancelled.
            job.cancel()
            with contextlib.suppress(BaseException):
                await job
            raise
        timed_out = not done
        if timed_out:
            job.cancel()
            try:
                result = await job
            except asyncio.CancelledError:
                return "timeout"
        else:
            result = job.result()
        answer = task_json(result, setup.outcome(result), setup.model.name, setup.price)
        self.events.send("usage", **answer["usage"])
        self.events.send("outcome", **answer)
        usage, outcome = result.usage, self.outcome
        outcome.steps = result.steps
        outcome.tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        outcome.cost = answer["usage"]["costUsd"]
        if timed_out:
            return "timeout"
        if result.status == "cancelled":
            return "cancelled"
        if result.status == "done":
            return "done"
        outcome.error = _first_line(result.summary) or result.status.replace("_", " ")
        if result.status == "step_limit":
            outcome.error = f"stopped at the step limit ({result.steps} steps)"
        return "failed"

    async def _command(self, setup: TaskSetup, text: str, kind: str) -> int | None:
        """The setup or test command in the sandbox (never outside it); its exit code, None
        when it could not run or timed out."""
        left = self._left()
        timeout = COMMAND_TIMEOUT if left is None else max(left, 1.0)
        try:
            result = await setup.shell.run(Command(text, timeout, OUTPUT_KEPT, sandboxed=True))
        except ShellRefused as error:
            self.events.send(kind, command=text, exit=None, output=str(error))
            self.outcome.error = f"the {kind} command was not run: {error}"
            return None
        self.events.send(kind, command=text, exit=result.exit_code, output=result.output)
        return None if result.timed_out else result.exit_code


def _watch_rate_limits(client: Any, report: Callable[[float], None]) -> None:
    """Tell `report` of each 429 the provider answers (the SDK retries it itself, as its
    Retry-After says): the driver then lowers the tasks in flight for a while."""
    http = getattr(client, "_client", None)  # the SDK's httpx client
    hooks = getattr(http, "event_hooks", None)
    if not isinstance(hooks, dict):
        return

    async def on_response(response: Any) -> None:
        if response.status_code == 429:
            report(_retry_after(response.headers))

    hooks.setdefault("response", []).append(on_response)


def _retry_after(headers: Any) -> float:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        with contextlib.suppress(TypeError, ValueError):
            return float(headers.get(name)) * scale
    return 0.0


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:500] if text.strip() else ""


def _words(error: BaseException) -> str:
    hint = getattr(error, "hint", "")
    return f"{error} {hint}".strip() if hint else str(error)


def run_blocking(spec: dict[str, Any]) -> dict[str, Any]:
    """`TaskRun` to its end in a fresh event loop, for an engine whose worker calls plain
    functions (Ray). Takes and returns JSON-able dicts."""
    return asyncio.run(TaskRun(TaskSpec.from_json(spec)).run()).to_json()
