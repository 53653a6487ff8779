"""How soon a newcomer is answered: the `agentls>` prompt drawn on a terminal, and `agentls
acp`'s answer to `initialize`, each beside a bare program of the same library started in
turns with it (prompt_toolkit's prompt; an ACP SDK agent that only initializes)."""

from __future__ import annotations

import json
import os
import pty
import select
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_BENCH = Path(__file__).parent
_DEADLINE = 60.0


@dataclass(frozen=True)
class FirstAnswer:
    agentls: float
    """Seconds, median of the rounds."""
    bare: float


def _prompt_seconds(argv: list[str], env: dict[str, str], root: Path) -> float:
    """Spawn on a terminal of its own; seconds until `agentls>` is drawn."""
    master, slave = pty.openpty()
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=root, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    seen = b""
    try:
        while b"agentls>" not in seen:  # drawn with escapes between it and its space
            assert time.perf_counter() - started < _DEADLINE, seen.decode(errors="replace")
            if select.select([master], [], [], 1.0)[0]:
                shown = os.read(master, 4096)
                if b"\x1b[6n" in shown:  # where is the cursor? as a terminal answers
                    os.write(master, b"\x1b[1;1R")
                seen += shown
        return time.perf_counter() - started
    finally:
        process.kill()
        process.wait()
        os.close(master)


def _initialize_seconds(argv: list[str], env: dict[str, str], root: Path) -> float:
    """Spawn, send `initialize`; seconds until its answer is read."""
    request = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write((json.dumps(request) + "\n").encode())
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        seconds = time.perf_counter() - started
        assert answer.get("id") == 0 and "result" in answer, answer
        return seconds
    finally:
        process.kill()
        process.wait()


def _in_turns(rounds: int, measure: dict[str, list[str]], how: object, env: dict[str, str],
              root: Path) -> FirstAnswer:  # fmt: skip
    seen: dict[str, list[float]] = {name: [] for name in measure}
    for _ in range(rounds):
        for name, argv in measure.items():
            seen[name].append(how(argv, env, root))  # type: ignore[operator]
    return FirstAnswer(statistics.median(seen["agentls"]), statistics.median(seen["bare"]))


def time_to_prompt(rounds: int, env: dict[str, str], root: Path) -> FirstAnswer:
    """`agentls run` (a conversation, on an xterm) against a bare prompt_toolkit prompt."""
    env = {**env, "TERM": "xterm-256color", "NO_COLOR": "1"}
    measure = {
        "agentls": [sys.executable, "-m", "agentls", "run"],
        "bare": [sys.executable, str(_BENCH / "bare_prompt.py")],
    }
    return _in_turns(rounds, measure, _prompt_seconds, env, root)


def time_to_initialize(rounds: int, env: dict[str, str], root: Path) -> FirstAnswer:
    """`agentls acp` against a bare ACP SDK agent."""
    measure = {
        "agentls": [sys.executable, "-m", "agentls", "acp"],
        "bare": [sys.executable, str(_BENCH / "bare_acp.py")],
    }
    return _in_turns(rounds, measure, _initialize_seconds, env, root)
