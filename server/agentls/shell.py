"""Running bash in the workspace root, in its own process group, with bounded output."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from collections import deque
from collections.abc import Mapping
from pathlib import Path

from .interfaces import ShellResult

_DRAIN_AFTER_EXIT = 0.5
"""Seconds to keep reading after bash exits: a background child may hold the pipe open."""


class BoundedOutput:
    """Keeps the head and the tail of a stream within `limit` characters, counting the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head: list[str] = []
        self._head_size = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self.total = 0

    def add(self, chunk: str) -> None:
        self.total += len(chunk)
        room = self.limit // 2 - self._head_size
        if room > 0:
            self._head.append(chunk[:room])
            self._head_size += len(chunk[:room])
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        keep = self.limit - self.limit // 2
        while self._tail_size - len(self._tail[0]) >= keep:
            self._tail_size -= len(self._tail.popleft())

    def text(self) -> str:
        head = "".join(self._head)
        tail = "".join(self._tail)
        kept = self.limit - len(head)
        if self.total <= self.limit:
            return head + tail
        tail = tail[len(tail) - kept :] if kept > 0 else ""
        cut = self.total - len(head) - len(tail)
        return f"{head}\n[... {cut} characters cut from the middle ...]\n{tail}"


def cut_middle(text: str, limit: int) -> str:
    output = BoundedOutput(limit)
    output.add(text)
    return output.text()


class SubprocessShell:
    """`bash -c` in `root`, stdin closed, stdout and stderr merged in order of arrival."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.root = root
        self.env = dict(env)

    async def run(self, command: str, timeout: float, output_limit: int) -> ShellResult:
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=self.root,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        output = BoundedOutput(output_limit)
        reader = asyncio.ensure_future(_read(process, output))
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except asyncio.TimeoutError:
            _kill_group(process.pid)
            await process.wait()
            await _finish(reader)
            return ShellResult(None, output.text(), timed_out=True)
        except BaseException:
            # Cancelled: kill, and reap the process so no transport outlives the loop.
            _kill_group(process.pid)
            reader.cancel()
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(process.wait()), 1)
            raise
        await _finish(reader)
        return ShellResult(process.returncode, output.text())


async def _read(process: asyncio.subprocess.Process, output: BoundedOutput) -> None:
    assert process.stdout is not None
    # Incremental, so a character split between two reads is not mangled.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await process.stdout.read(65536):
        output.add(decoder.decode(chunk))
    output.add(decoder.decode(b"", final=True))


async def _finish(reader: asyncio.Future[None]) -> None:
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(reader, _DRAIN_AFTER_EXIT)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
