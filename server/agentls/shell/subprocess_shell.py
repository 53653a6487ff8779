"""Running bash in the workspace root, in its own process group (in a sandbox where there is
one), with bounded output."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from ..interfaces import Command, CommandCancelled, ShellRefused, ShellResult
from . import launch, sandbox
from .bounded_output import BoundedOutput, LiveLines
from .process_groups import GROUPS
from .sandbox.git_audit import GitAudit

_DRAIN_AFTER_EXIT = 0.5
"""Seconds to keep reading after bash exits: a background child may hold the pipe open."""

_BACKGROUND_CHUNK = 65536
_BACKGROUND_PAUSE = 0.1
"""What a background job still writes after its step is read (and dropped) one chunk per
pause, 640 KB/s at most: a job that writes a little never blocks, one that writes without
end (`yes &`) waits on a full pipe instead of keeping the server busy."""

_GATE = 'read -r go && exec bash -c "$0" </dev/null'
"""Bash waits for a go from the server, then becomes `bash -c command` in the same process
group. The go comes once the group is recorded, so no command runs that a SIGKILL of the
server could leave behind; if the server dies first, the read ends and nothing runs."""


class SubprocessShell:
    """`bash -c` in `root`, stdin closed, stdout and stderr merged in order of arrival;
    confined by `box` when given one (with the network if `network`).

    `env` is all a command sees, in the sandbox too (and as the sandbox's own environment,
    which its /proc shows): it must hold no secret.
    """

    def __init__(
        self,
        root: Path,
        env: Mapping[str, str],
        secrets: tuple[str, ...] = (),
        box: sandbox.Sandbox | None = None,
        network: bool = False,
    ) -> None:
        self.root = root
        self.env = dict(env)
        self.secrets = secrets
        self.box = box
        self.network = network
        self.audit = GitAudit(root)

    @property
    def sandboxed(self) -> bool:
        return self.box is not None

    async def run(self, command: Command) -> ShellResult:
        argv = ["bash", "-c", _GATE, command.text]
        box = self.box if command.sandboxed else None
        output = command.on_output
        live = LiveLines(output, self.secrets) if output else None
        timeout, output_limit = command.timeout, command.output_limit
        if box is None:
            return await self._run(argv, None, timeout, output_limit, live)
        settings = self.audit.before()
        try:
            # The confinement is made again for each command (by the launcher): a `.git`
            # made by the last one is protected too.
            result = await self._run(argv, box, timeout, output_limit, live)
        finally:
            # Nothing inside outlives the command (its PID namespace): what it planted is
            # all there, and disarmed before anything else runs git (cancelled too).
            planted = self.audit.after(settings)
        result.sandbox_note = sandbox.blocked_note(result.output, self.network, planted)
        return result

    async def _run(
        self,
        argv: list[str],
        box: sandbox.Sandbox | None,
        timeout: float,
        output_limit: int,
        live: LiveLines | None,
    ) -> ShellResult:
        # The output pipe is ours, not asyncio's: asyncio would count bash as running until
        # every process holding the pipe has closed it, so `server &` would never finish.
        read_end, write_end = os.pipe()
        try:
            process = await launch.start(
                launch.in_workspace(argv, self.root, self.env, box, self.network),
                stdin=asyncio.subprocess.PIPE,
                stdout=write_end,
                stderr=write_end,
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        GROUPS.add(process.pid)
        assert process.stdin is not None
        process.stdin.write(b"go\n")
        process.stdin.close()
        output = BoundedOutput(output_limit, self.secrets)
        reading: asyncio.Future[None] | None = None
        pipe: asyncio.ReadTransport | None = None
        try:
            try:
                pipe, reader = await _reader(read_end)
                reading = asyncio.ensure_future(_read(reader, output, live))
                await asyncio.wait_for(process.wait(), timeout)
            except asyncio.TimeoutError:
                assert reading is not None  # only the wait times out, after reading began
                GROUPS.kill(process.pid)
                await process.wait()
                await _drain(reading)
                return ShellResult(None, output.text(), timed_out=True)
            except asyncio.CancelledError:
                # Cancelled: kill, and reap the process so nothing outlives the loop; what
                # it printed so far is the user's and the model's.
                GROUPS.kill(process.pid)
                with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(process.wait()), 1)
                    if reading is not None:
                        await _drain(reading)
                raise CommandCancelled(output.text()) from None
            except BaseException:
                GROUPS.kill(process.pid)
                raise
            complete = await _drain(reading)
            text = output.text()
            if complete:
                GROUPS.forget_if_empty(process.pid)
            else:
                # The job lives on; it may still write, so its pipe must stay open and read.
                reading.cancel()
                _keep_reading(reader, pipe)
                reading = pipe = None
                note = "[background processes still hold the output; the rest is not shown]"
                text = text.rstrip("\n") + "\n" + note
            return ShellResult(process.returncode, text)
        finally:
            if reading is not None:
                reading.cancel()
            if pipe is not None:
                pipe.close()


class RefusingShell:
    """Runs nothing: the settings require a sandbox and there is none (`reason` says why)."""

    sandboxed = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def run(self, command: Command) -> ShellResult:
        raise ShellRefused(
            f'bash is off: the setting sandbox is "required" and there is no sandbox here '
            f"({self.reason}). Do not retry; tell the user."
        )


async def _reader(descriptor: int) -> tuple[asyncio.ReadTransport, asyncio.StreamReader]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(descriptor, "rb", buffering=0)
    )
    return transport, reader


async def _read(
    reader: asyncio.StreamReader, output: BoundedOutput, live: LiveLines | None
) -> None:
    # Incremental, so a character split between two reads is not mangled.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await reader.read(65536):
        text = decoder.decode(chunk)
        output.add(text)
        if live is not None:
            live.add(text)
    output.add(decoder.decode(b"", final=True))
    if live is not None:
        live.finish()


_background: set[asyncio.Future[None]] = set()
"""Readers of the output of background jobs, kept referenced until the jobs close it."""


def _keep_reading(reader: asyncio.StreamReader, pipe: asyncio.ReadTransport) -> None:
    """Go on reading (and dropping) a background job's output, slowly, until it closes the
    pipe."""
    reading = asyncio.ensure_future(_drop_slowly(reader))
    _background.add(reading)

    def done(_: asyncio.Future[None]) -> None:
        _background.discard(reading)
        pipe.close()

    reading.add_done_callback(done)


async def _drop_slowly(reader: asyncio.StreamReader) -> None:
    while await reader.read(_BACKGROUND_CHUNK):
        await asyncio.sleep(_BACKGROUND_PAUSE)


async def _drain(reading: asyncio.Future[None]) -> bool:
    """Wait briefly for the rest of the output (a background job may keep the pipe open);
    whether it all came."""
    try:
        await asyncio.wait_for(asyncio.shield(reading), _DRAIN_AFTER_EXIT)
    except asyncio.TimeoutError:
        return False
    return True
