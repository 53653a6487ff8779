"""The sandbox's cost per command: `true` through the real shell, sandboxed and not, and the
same `bwrap` run bare (no agentls around it), in turns."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from agentls import redaction
from agentls.interfaces import Command
from agentls.shell import sandbox
from agentls.shell.sandbox.bubblewrap import Bubblewrap
from agentls.shell.subprocess_shell import SubprocessShell


@dataclass(frozen=True)
class SandboxCost:
    sandboxed_ms: float
    bare_ms: float
    bwrap_ms: float | None = None
    """`bwrap` with the same namespaces running `true` itself: what bubblewrap costs alone."""
    program: str = ""
    unavailable: str | None = None
    """Why there is no sandbox here (then both figures are the bare shell's)."""


async def _bare_bwrap(path: str, root: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        path,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user"),
        *("--unshare-pid", "--unshare-ipc", "--unshare-net", "--chdir", str(root), "true"),
        env={},
    )
    assert await process.wait() == 0


async def sandbox_cost(root: Path, rounds: int) -> SandboxCost:
    """Median milliseconds of `true` run by the shell the server uses, with and without the
    sandbox, and by a bare `bwrap`; the runs alternate, so load on the machine weighs on all
    alike."""
    found = sandbox.find()
    env = redaction.scrubbed(os.environ)
    bare = SubprocessShell(root, env)

    async def shell_true(shell: SubprocessShell) -> None:
        result = await shell.run(Command("true", 30, 1000))
        assert result.exit_code == 0, result.output

    runs: dict[str, Callable[[], Awaitable[None]]] = {"bare": lambda: shell_true(bare)}
    if isinstance(found, Bubblewrap) and found.path:
        boxed = SubprocessShell(root, env, (), found)
        runs["boxed"] = lambda: shell_true(boxed)
        runs["bwrap"] = lambda: _bare_bwrap(str(found.path), root)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds + 1):  # the first round warms up
        for name, run in runs.items():
            started = time.perf_counter()
            await run()
            times[name].append(time.perf_counter() - started)
    median = {name: statistics.median(spent[1:]) * 1000 for name, spent in times.items()}
    return SandboxCost(
        median.get("boxed", median["bare"]),
        median["bare"],
        median.get("bwrap"),
        getattr(found, "path", None) or "",
        found.reason if isinstance(found, sandbox.Unavailable) else None,
    )
