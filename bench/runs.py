"""Each measure: agentls driven over LSP, and its baseline, against one fake API."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api import (
    FakeAnthropic,
    FakeOpenAI,
    first_prompt_tokens,
    reply,
    seconds_per_step,
    text,
    tool_use,
)
from .editor import BenchEditor, cpu_seconds, resident_kib, server_command
from .trajectory import (
    MODEL,
    ONE_WORD_TASK,
    OPENAI_MODEL,
    READ_TASK,
    greeting_turns,
    read_turns,
)

SETTINGS = {"approveCommands": "always", "maxSteps": 1000}
NAIVE = Path(__file__).with_name("naive.py")


def environment(api_url: str, home: Path) -> dict[str, str]:
    """The process environment for both loops: the fake's URL and key, nothing of the user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    return {
        **env,
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "bench-key",
        "AGENTLS_MODEL": MODEL,
        "MODEL_ID": MODEL,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
    }


@dataclass(frozen=True)
class Startup:
    seconds: float
    cpu_seconds: float
    """Less disturbed than the wall time by other work on the machine."""
    resident_kib: int


async def start_up(name: str, env: dict[str, str], root: Path) -> Startup:
    """Spawn a server, initialize it, note the time and memory, shut it down."""
    editor = BenchEditor(SETTINGS)
    seconds = await editor.start(server_command(name), env, root)
    used, resident = cpu_seconds(editor.pid), resident_kib(editor.pid)
    await editor.close()
    return Startup(seconds, used, resident)


async def start_ups(rounds: int, env: dict[str, str], root: Path) -> dict[str, Startup]:
    """Median start-up of agentls and of the bare pygls server, spawned in turns."""
    seen: dict[str, list[Startup]] = {"agentls": [], "bare": []}
    for _ in range(rounds):
        for name, runs in seen.items():
            runs.append(await start_up(name, env, root))
    return {
        name: Startup(
            statistics.median(r.seconds for r in runs),
            statistics.median(r.cpu_seconds for r in runs),
            int(statistics.median(r.resident_kib for r in runs)),
        )
        for name, runs in seen.items()
    }


@dataclass(frozen=True)
class Trajectory:
    billed_input: float
    seconds_per_step: float
    first_prompt_tokens: int


def _trajectory(fake: FakeAnthropic) -> Trajectory:
    requests = fake.requests
    return Trajectory(
        fake.billed.billed_input,
        seconds_per_step(requests) if len(requests) > 1 else 0.0,
        first_prompt_tokens(requests),
    )


async def agentls_task(
    editor: BenchEditor, fake: FakeAnthropic, task: str, turns: list[Any]
) -> Trajectory:
    """One task in a new session, from a cold cache."""
    fake.reset()
    fake.script(*turns)
    await editor.run_task(task)
    await editor.new_session()
    return _trajectory(fake)


async def naive_task(
    fake: FakeAnthropic, env: dict[str, str], root: Path, task: str, turns: list[Any]
) -> Trajectory:
    fake.reset()
    fake.script(*turns)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(NAIVE),
        task,
        cwd=root,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, errors = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the naive loop failed: {errors.decode(errors='replace')}")
    return _trajectory(fake)


@dataclass(frozen=True)
class Comparison:
    agentls: list[Trajectory]
    naive: list[Trajectory]


async def compare(
    editor: BenchEditor,
    fake: FakeAnthropic,
    env: dict[str, str],
    root: Path,
    paths: list[str],
    rounds: int,
) -> tuple[Comparison, Comparison]:
    """The one-word task, then the read_file trajectory in turns, both loops the same script."""
    greeting = Comparison(
        [await agentls_task(editor, fake, ONE_WORD_TASK, greeting_turns())],
        [await naive_task(fake, env, root, ONE_WORD_TASK, greeting_turns())],
    )
    reads = Comparison([], [])
    for _ in range(rounds):
        reads.agentls.append(await agentls_task(editor, fake, READ_TASK, read_turns(paths)))
        reads.naive.append(await naive_task(fake, env, root, READ_TASK, read_turns(paths)))
    return greeting, reads


@dataclass(frozen=True)
class PrefixCached:
    """The read_file trajectory in the OpenAI format, against automatic prefix caching."""

    billed_input: float
    prompt_tokens: int
    cache_hit_rate: float


async def openai_reads(env: dict[str, str], root: Path, paths: list[str]) -> PrefixCached:
    """The read_file trajectory once, in a server of its own talking Chat Completions."""
    with FakeOpenAI() as fake:
        chat_env = {
            **env,
            "AGENTLS_PROVIDER": "openai",
            "OPENAI_BASE_URL": fake.url,
            "OPENAI_API_KEY": "bench-key",
            "AGENTLS_MODEL": OPENAI_MODEL,
        }
        editor = BenchEditor(SETTINGS)
        await editor.start(server_command("agentls"), chat_env, root)
        try:
            fake.script(*read_turns(paths))
            result = await editor.run_task(READ_TASK)
        finally:
            await editor.close()
        if result["status"] != "done":
            raise RuntimeError(f"the OpenAI-format task failed: {result!r}")
        billed = fake.billed
    prompt = billed.input + billed.cache_read
    return PrefixCached(billed.billed_input, prompt, billed.cache_read / prompt)


@dataclass(frozen=True)
class Soak:
    resident_kib: list[int]
    """After each task."""
    seconds_per_step: list[float]
    cpu_seconds_per_step: list[float]
    """The server's own CPU time: what would grow with a leak, whatever else the machine does."""


async def soak(editor: BenchEditor, fake: FakeAnthropic, paths: list[str], tasks: int) -> Soak:
    resident, per_step, cpu_per_step = [], [], []
    for _ in range(tasks):
        used = cpu_seconds(editor.pid)
        run = await agentls_task(editor, fake, READ_TASK, read_turns(paths))
        cpu_per_step.append((cpu_seconds(editor.pid) - used) / len(paths))
        resident.append(resident_kib(editor.pid))
        per_step.append(run.seconds_per_step)
    return Soak(resident, per_step, cpu_per_step)


@dataclass(frozen=True)
class BigEdit:
    wire_bytes: list[int]
    server_seconds: list[float]
    file_bytes: int


def big_file(path: Path, size: int) -> list[str]:
    """A file of about `size` bytes of distinct lines; its lines."""
    lines: list[str] = []
    total = 0
    while total < size:
        line = f"value_{len(lines):07} = {len(lines)} * 2  # {'padding ' * 5}\n"
        lines.append(line)
        total += len(line)
    path.write_text("".join(lines))
    return lines


async def big_edits_in_own_server(
    fake: FakeAnthropic, env: dict[str, str], root: Path, size: int, rounds: int
) -> BigEdit:
    """`big_edits` in a server of their own, so that nothing before them weighs on them."""
    editor = BenchEditor(SETTINGS)
    await editor.start(server_command("agentls"), env, root)
    try:
        # A first task pays the SDK's one-time set-up, which is no part of an edit's cost.
        fake.script(*greeting_turns())
        await editor.run_task(ONE_WORD_TASK)
        return await big_edits(editor, fake, root, size, rounds)
    finally:
        await editor.close()


async def big_edits(
    editor: BenchEditor, fake: FakeAnthropic, root: Path, size: int, rounds: int
) -> BigEdit:
    """One-line edit_file calls on a big file open in the editor, whose SDK is warm.

    The server's time is from the fake receiving the request it answers with the edit_file
    call to the editor reading the workspace/applyEdit: an upper bound, since it also holds
    the fake's reply, the SDK's reading of it and both pipes.
    """
    path = root / "big.py"
    lines = big_file(path, size)
    editor.open(path)
    wire, seconds = [], []
    for round_ in range(rounds):
        line = lines[len(lines) * (round_ + 1) // (rounds + 1)]
        edit = {"path": path.name, "old_text": line, "new_text": line.replace("* 2", "* 3")}
        fake.reset()
        fake.script(reply(tool_use("edit_file", edit)), reply(text("Changed it.")))
        result = await editor.run_task("Multiply by 3 on that line.")
        if result["edits"]["applied"] != 1:
            raise RuntimeError(f"the edit did not land: {result!r}")
        arrival = editor.measuring.edit_arrivals[-1]
        wire.append(arrival.wire_bytes)
        seconds.append(arrival.at - fake.requests[0].received)
    return BigEdit(wire, seconds, path.stat().st_size)
