"""The sandbox's cost per command: `true` through the real shell, sandboxed and not, in turns."""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from agentls import redaction
from agentls.shell import sandbox
from agentls.shell.subprocess_shell import SubprocessShell


@dataclass(frozen=True)
class SandboxCost:
    sandboxed_ms: float
    bare_ms: float
    unavailable: str | None = None
    """Why there is no sandbox here (then both figures are the bare shell's)."""


async def sandbox_cost(root: Path, rounds: int) -> SandboxCost:
    """Median milliseconds of `true` run by the shell the server uses, with and without the
    sandbox; the runs alternate, so load on the machine weighs on both alike."""
    found = sandbox.find()
    env = redaction.scrubbed(os.environ)
    bare = SubprocessShell(root, env)
    if isinstance(found, sandbox.Unavailable):
        boxed, unavailable = bare, found.reason
    else:
        boxed, unavailable = SubprocessShell(root, env, (), found), None
    times: dict[SubprocessShell, list[float]] = {bare: [], boxed: []}
    for _ in range(rounds + 1):  # the first round warms up
        for shell in (boxed, bare):
            started = time.perf_counter()
            result = await shell.run("true", 30, 1000)
            times[shell].append(time.perf_counter() - started)
            assert result.exit_code == 0, result.output
    return SandboxCost(
        statistics.median(times[boxed][1:]) * 1000,
        statistics.median(times[bare][1:]) * 1000,
        unavailable,
    )
