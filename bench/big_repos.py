"""Big repositories: the wait before a task's first edit, the first checkpoint beside
`git add -A && git commit`, undo on trees of 100,000 and more files, a turn of read-only
calls beside its slowest call alone, and the server's memory at idle."""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.history.checkpoints import ShadowRepository
from agentls.history.undo import undo
from agentls.interfaces import CheckpointMark
from agentls.terminal.history_commands import DiskEditor
from agentls.tools.search import ripgrep

from .api import FakeAnthropic, reply, text, tool_use
from .checkpoints import make_workspace
from .editor import BenchEditor, resident_kib, server_command
from .runs import SETTINGS

EDITED = "package0/module0.py"
"""The file a first edit changes (make_workspace's first module)."""


@dataclass(frozen=True)
class FirstEdit:
    files: int
    seconds: float
    """Median over rounds: the task's first model request to the edit reaching the editor."""


async def first_edit(env: dict[str, str], root: Path, files: int, rounds: int) -> FirstEdit:
    """A task whose first step is an edit, in a new server and a new state folder each
    round, so the edit meets the workspace's very first checkpoint."""
    make_workspace(root, files)
    waits = []
    for round_ in range(rounds):
        state = root.parent / f"state-{root.name}-{round_}"
        fake = FakeAnthropic()
        with fake:
            editor = BenchEditor(SETTINGS)
            local = {**env, "ANTHROPIC_BASE_URL": fake.url, "XDG_STATE_HOME": str(state)}
            await editor.start(server_command("agentls"), local, root)
            try:
                old = (root / EDITED).read_text()
                edit = {"path": EDITED, "old_text": old, "new_text": old + "# edited\n"}
                fake.script(reply(tool_use("edit_file", edit)), reply(text("Done.")))
                result = await editor.run_task("Mark the first line.")
                if result["edits"]["applied"] != 1:
                    raise RuntimeError(f"the edit did not land: {result!r}")
                arrival = editor.measuring.edit_arrivals[-1]
                waits.append(arrival.at - fake.requests[0].received)
            finally:
                await editor.close()
        (root / EDITED).write_text((root / EDITED).read_text().replace("# edited\n", ""))
    return FirstEdit(files, statistics.median(waits))


@dataclass(frozen=True)
class FirstCheckpoint:
    files: int
    git_seconds: float
    """`git init && git add -A && git commit` of the same files."""
    plain_seconds: float
    """The first checkpoint without a git repository: every file hashed."""
    seeded_seconds: float
    """The first checkpoint of the git workspace, started from its index."""


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def first_checkpoint(home: Path, files: int) -> FirstCheckpoint:
    root = home / f"checkpoint-{files}"
    make_workspace(root, files)
    plain = _timed(
        lambda: ShadowRepository(root, home / f"shadow-plain-{files}").record(
            CheckpointMark(kind="task", session="bench", task=1, step=None, label="first")
        )
    )
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]

    def commit() -> None:
        for arguments in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "all"]):
            subprocess.run(["git", *identity, *arguments], cwd=root, check=True)

    git_seconds = _timed(commit)
    seeded = _timed(
        lambda: ShadowRepository(root, home / f"shadow-git-{files}").record(
            CheckpointMark(kind="task", session="bench", task=1, step=None, label="first")
        )
    )
    shutil.rmtree(root)
    return FirstCheckpoint(files, git_seconds, plain, seeded)


@dataclass(frozen=True)
class BigUndo:
    files: int
    first_seconds: float
    """The first checkpoint (in the background during a task)."""
    undo_seconds: float
    restored: bool


async def undo_on(root: Path, shadow: Path, files: int) -> BigUndo:
    """A task's edit of one file of `root` and its undo, as the loop and `agentls undo` do."""
    repository = ShadowRepository(root, shadow)
    # A file of its own: the tree's files are hard links to one another.
    target = root / "edited.py"
    before = b"VALUE = 1\n" * 40
    target.write_bytes(before)
    first = _timed(
        lambda: repository.record(
            CheckpointMark(kind="task", session="bench", task=1, step=None, label="first")
        )
    )
    relative = target.relative_to(root).as_posix()
    repository.record(
        CheckpointMark(
            kind="step", session="bench", task=1, step=1, label="edit_file", touches=[relative]
        )
    )
    target.write_bytes(before + b"# edited\n")
    repository.record(CheckpointMark(kind="end", session="bench", task=1, step=None, label="first"))
    started = time.perf_counter()
    result = await undo(repository, DiskEditor(root), None, (), "bench", 2)
    seconds = time.perf_counter() - started
    restored = result.restored == [relative] and target.read_bytes() == before
    target.unlink()
    return BigUndo(files, first, seconds, restored)


@dataclass(frozen=True)
class ParallelReads:
    together_seconds: float
    slowest_alone_seconds: float
    rg_together_seconds: float
    """The two greps run by rg alone, side by side: on 2 cores they share the CPUs, so
    this bounds how well any agent can overlap them."""
    rg_slower_alone_seconds: float


READS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "copy000/typing.py"}),
    ("read_file", {"path": "copy000/argparse.py"}),
    ("read_file", {"path": "copy000/inspect.py"}),
    ("grep", {"pattern": r"def __\w+__\(self"}),
    ("grep", {"pattern": "class HTTPConnection"}),
]
"""One turn's read-only calls: 3 read_file, 2 grep over the search tree."""


async def _step(
    editor: BenchEditor, fake: FakeAnthropic, calls: list[tuple[str, dict[str, Any]]]
) -> float:
    """The step's time as the fake saw it: its tool_use reply to the request with results."""
    fake.reset()
    fake.script(reply(*(tool_use(name, arguments) for name, arguments in calls)), reply(text("ok")))
    await editor.run_task("read")
    await editor.new_session()
    return fake.requests[1].received - fake.requests[0].received


async def parallel_reads(
    fake: FakeAnthropic, env: dict[str, str], root: Path, rounds: int
) -> ParallelReads:
    editor = BenchEditor(SETTINGS)
    await editor.start(server_command("agentls"), env, root)
    together, alone, rg_together, rg_alone = [], [], [], []
    patterns = [arguments["pattern"] for name, arguments in READS if name == "grep"]
    try:
        await _step(editor, fake, READS[:1])  # the SDK's one-time set-up
        for _ in range(rounds):
            together.append(await _step(editor, fake, READS))
            alone.append(max([await _step(editor, fake, [call]) for call in READS]))
            rg_together.append(_side_by_side(root, patterns))
            rg_alone.append(max(_side_by_side(root, [pattern]) for pattern in patterns))
    finally:
        await editor.close()
    return ParallelReads(
        statistics.median(together),
        statistics.median(alone),
        statistics.median(rg_together),
        statistics.median(rg_alone),
    )


def _side_by_side(root: Path, patterns: list[str]) -> float:
    """Seconds for rg to search `root` for each pattern, all at once, each output read from
    a pipe as it comes (not /dev/null, where rg stops at the first match)."""

    def search(pattern: str) -> None:
        argv = [ripgrep.binary() or "rg", "--no-config", "-n", pattern]
        subprocess.run(argv, cwd=root, capture_output=True, check=False)

    started = time.monotonic()
    with ThreadPoolExecutor(len(patterns)) as pool:
        list(pool.map(search, patterns))
    return time.monotonic() - started


async def idle_memory(env: dict[str, str], root: Path, seconds: float) -> int:
    """The server's resident set (KiB) `seconds` after initialize, nothing asked of it."""
    editor = BenchEditor(SETTINGS)
    await editor.start(server_command("agentls"), env, root)
    try:
        await asyncio.sleep(seconds)
        return resident_kib(editor.pid)
    finally:
        await editor.close()
