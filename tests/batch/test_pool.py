"""The local pool letting a worker go: the worker ends in its own time, within LET_GO, and
is killed if it overstays."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from agentls.batch import pool
from agentls.batch.pool import LocalPool, _Worker

Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture
async def let_go(
    tmp_path: Path,
) -> AsyncIterator[Callable[[Behaviour], Awaitable[subprocess.Popen[bytes]]]]:
    """Let a worker that behaves so go; the process that stands for its process group."""
    # Stands for the worker's process group: the pool kills it only if the worker is alive.
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)

    async def run(behaviour: Behaviour) -> subprocess.Popen[bytes]:
        ours, theirs = socket.socketpair()
        answers, orders = await asyncio.open_unix_connection(sock=ours)
        their_orders, their_answers = await asyncio.open_unix_connection(sock=theirs)
        their_answers.write(json.dumps({"ready": process.pid}).encode() + b"\n")
        job = asyncio.ensure_future(behaviour(their_orders, their_answers))
        worker = _Worker(orders, answers)
        await worker.started
        await LocalPool(1, tmp_path)._retire(worker)
        job.cancel()
        await asyncio.gather(job, return_exceptions=True)
        return process

    yield run
    process.kill()
    process.wait()


async def test_a_worker_let_go_ends_its_cleanup_before_anything_kills_it(
    let_go: Callable[[Behaviour], Awaitable[subprocess.Popen[bytes]]],
) -> None:
    cleaned = asyncio.Event()

    async def worker(orders: asyncio.StreamReader, answers: asyncio.StreamWriter) -> None:
        assert await orders.read() == b""  # the end of its orders
        await asyncio.sleep(0.3)  # removing its kept trees
        cleaned.set()
        answers.close()

    process = await let_go(worker)
    assert cleaned.is_set()
    assert process.poll() is None  # the worker ended by itself, not killed


async def test_a_worker_that_overstays_is_killed(
    let_go: Callable[[Behaviour], Awaitable[subprocess.Popen[bytes]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pool, "LET_GO", 0.3)

    async def worker(orders: asyncio.StreamReader, answers: asyncio.StreamWriter) -> None:
        await orders.read()
        await asyncio.sleep(60)  # stuck, its socket open

    process = await let_go(worker)
    assert process.wait(timeout=10) == -9
