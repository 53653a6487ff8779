"""The local pool letting a worker go: the worker ends in its own time, within LET_GO."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from pathlib import Path

from agentls.batch.pool import LocalPool, _Worker


async def test_a_worker_let_go_ends_its_cleanup_before_anything_kills_it(tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    answers, orders = await asyncio.open_unix_connection(sock=ours)
    their_orders, their_answers = await asyncio.open_unix_connection(sock=theirs)
    # Stands for the worker's process group: the pool kills it only if the worker is alive.
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    cleaned = asyncio.Event()

    async def worker() -> None:
        their_answers.write(json.dumps({"ready": process.pid}).encode() + b"\n")
        assert await their_orders.read() == b""  # the end of its orders
        await asyncio.sleep(0.3)  # removing its kept trees
        cleaned.set()
        their_answers.close()

    try:
        job = asyncio.ensure_future(worker())
        let_go = _Worker(orders, answers)
        await let_go.started
        await LocalPool(1, tmp_path)._retire(let_go)
        assert cleaned.is_set()
        assert process.poll() is None  # ended by itself, not killed
        await job
    finally:
        process.kill()
        process.wait()
