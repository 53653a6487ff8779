"""`agentls batch --ray` (tier `ray`: `pytest -m ray`, with `pip install '.[ray]'`): a
simulated cluster of two worker nodes, one removed while its task runs; and a cluster
started by `ray start --head` on loopback, reached by its address. Small clusters (one
slot a node, little object store), always shut down."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentls.batch.driver import BatchOptions, run_batch
from batches import (
    asked,
    branches,
    environment,
    journal,
    make_repository,
    prompt,
    script_edits,
    start_batch,
    wait_for,
    worktrees,
    write_tasks,
)
from fake_api import FakeAnthropic, hang, reply, text, tool_use

# Loopback clusters: Ray would otherwise dial the machine's network address for 127.0.0.1
# (read when Ray is imported; the driver's `--ray 127.0.0.1:PORT` sets it the same way).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = pytest.mark.ray

SMALL = {"object_store_memory": 100 * 1024 * 1024, "node_ip_address": "127.0.0.1"}
FAST_DEATH = {
    # A removed node is known dead in about a second, not the default half a minute.
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_failure_threshold": 2,
}


@pytest.fixture
def loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No usage report; Ray's files (sockets, the current cluster's address) in a folder of
    the test's, not the machine's /tmp/ray (short: a socket's path has 107 bytes at most)."""
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    folder = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    monkeypatch.setenv("RAY_TMPDIR", folder)
    # Said outright, so a ~/.ray/auth_token of the user's is never read; this process's Ray
    # read the mode at import: the simulated cluster in it runs without tokens.
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    yield
    shutil.rmtree(folder, ignore_errors=True)


def held_edit(task_id: str, value: str) -> Any:
    """Each request of the task: the first one (of any attempt) held two seconds, then the
    edit; the next one, done. A retried task starts over and gets the same."""

    def turn(body: dict[str, Any]) -> Any:
        if len(body["messages"]) == 1:
            edit = {"path": "app.py", "old_text": "x = 0", "new_text": f"x = {value}"}
            return hang(2, reply(tool_use("edit_file", edit)))
        return reply(text(f"Task {task_id} done."))

    return turn


def test_a_node_removed_while_its_task_runs(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, loopback: None
) -> None:
    for name, value in environment(fake, tmp_path).items():
        monkeypatch.setenv(name, value)  # the nodes' workers inherit it, as from `ray start`
    repository = make_repository(tmp_path / "repo")
    ids = ["a", "b", "c", "d"]
    write_tasks(tmp_path / "tasks.jsonl", ids)
    for number, task_id in enumerate(ids, 1):
        fake.script_for(prompt(task_id), *[held_edit(task_id, str(number))] * 8)
    head = {"num_cpus": 0, "include_dashboard": False, "_system_config": FAST_DEATH, **SMALL}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    try:
        nodes = [cluster.add_node(num_cpus=1, resources={"agentls_slot": 1}, **SMALL) for _ in "12"]
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, _node_ip_address="127.0.0.1")

        def remove_a_busy_node() -> None:
            wait_for(lambda: len(fake.requests) >= 2, 120, "both nodes' first requests")
            cluster.remove_node(nodes[0], allow_graceful=False)

        remover = threading.Thread(target=remove_a_busy_node, daemon=True)
        remover.start()
        options = BatchOptions(
            tasks=tmp_path / "tasks.jsonl", out=tmp_path / "out", ray=cluster.address
        )
        status = asyncio.run(run_batch(options))
        remover.join(10)
    finally:
        ray.shutdown()
        cluster.shutdown()
    lines = journal(tmp_path)
    assert status == 0, lines
    assert sorted(line["id"] for line in lines) == ids  # each once
    assert {line["status"] for line in lines} == {"done"}
    assert len({line["node"] for line in lines}) == 1, "the removed node ended none"
    assert sum(asked(fake, task_id) for task_id in ids) > 8, "a task ran again elsewhere"
    assert branches(repository) == {f"agentls/out/{i}": f"x = {n}\n" for n, i in enumerate(ids, 1)}
    assert worktrees(repository) == [str(repository)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def head_node(
    tmp_path: Path, fake: FakeAnthropic, loopback: None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """`ray start --head` on 127.0.0.1, in its own process group (ended with it: never
    `ray stop`, which would stop every cluster of this user on the machine)."""
    port = _free_port()
    # Token authentication, as `ray start` turns on, with a token of the test's own (never
    # the user's ~/.ray/auth_token): the driver shows it to join.
    token = tmp_path / "auth_token"
    token.write_text(secrets.token_hex(32))
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(token))
    env = {**os.environ, **environment(fake, tmp_path)}
    ray_command = Path(sys.executable).with_name("ray")
    head = subprocess.Popen(
        [
            str(ray_command),
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            f"--object-store-memory={100 * 1024 * 1024}",
            "--disable-usage-stats",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield f"127.0.0.1:{port}"
    finally:
        for sent in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(head.pid, sent)
                head.wait(20)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue


def test_a_cluster_reached_by_its_address(
    tmp_path: Path, fake: FakeAnthropic, head_node: str
) -> None:
    repository = make_repository(tmp_path / "repo")
    ids = ["one", "two", "three"]
    write_tasks(tmp_path / "tasks.jsonl", ids)
    script_edits(fake, ids)
    driver = start_batch(tmp_path, environment(fake, tmp_path), "--ray", head_node)
    try:
        assert driver.wait(180) == 0, driver.stderr.read() if driver.stderr else ""
    finally:
        driver.kill()
    lines = journal(tmp_path)
    assert [line["status"] for line in lines] == ["done"] * 3
    assert branches(repository) == {f"agentls/out/{i}": f"x = {n}\n" for n, i in enumerate(ids, 1)}
    assert worktrees(repository) == [str(repository)]
