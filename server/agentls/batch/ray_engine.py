"""The Ray engine (`--ray auto|ADDRESS`, `pip install 'agentls[ray]'`): each task a Ray task
running the same runner as the local pool's workers, on whichever node has room.

- Room: a task asks for one `agentls_slot` when the cluster offers that resource (`ray start
  --resources '{"agentls_slot": 8}'`: a node runs as many tasks as it offers), else for one
  CPU.
- Retries: Ray runs a task again when its worker process or its node died (`max_retries`);
  an exception in the task is not retried (`retry_exceptions=False`): it is a result.
- The key: never in a `runtime_env` (the dashboard and the logs show it). A worker reads
  it as agentls does, from its own environment (the `ray start` that made its node, or the
  driver's for a cluster the driver started) or `~/.config/agentls/.env` on its node.
- Truth: the driver's journal, not Ray's state: a dead head or driver costs only the tasks
  that were running; the next run of the batch runs them again.

Ray is imported here only, and this module only when `--ray` is given.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import ray
import ray.exceptions

from ..tasktree.runner import Live, TaskOutcome, TaskSpec, run_blocking
from .engine import WorkerLost

SLOT = "agentls_slot"

_LOST = (
    ray.exceptions.WorkerCrashedError,
    ray.exceptions.NodeDiedError,
    ray.exceptions.LocalRayletDiedError,
    ray.exceptions.ObjectLostError,
    ray.exceptions.OwnerDiedError,
)


def _run_on_node(spec: dict[str, Any]) -> dict[str, Any]:
    """What runs in the Ray worker: the runner, and which node it ran on."""
    outcome = run_blocking(spec)
    node = ray.get_runtime_context().get_node_id()
    outcome["node"] = f"{socket.gethostname()}/{node[:8]}"
    return outcome


def loopback(address: str) -> bool:
    return address.rsplit(":", 1)[0] in ("127.0.0.1", "localhost")


def connect(address: str) -> None:
    """Join the cluster at `address`, or with `auto` the one this machine runs (else start
    one here, without the dashboard). A loopback address pins this driver to loopback too:
    Ray would otherwise advertise, and dial, the machine's network address."""
    if ray.is_initialized():
        return
    pinned: dict[str, Any] = {"_node_ip_address": "127.0.0.1"} if loopback(address) else {}
    ray.init(
        address=None if address == "auto" else address,
        include_dashboard=False,
        log_to_driver=False,
        **pinned,
    )


class RayEngine:
    def __init__(self, address: str, retries: int, logs: Path) -> None:
        connect(address)
        resources = ray.cluster_resources()
        self.uses_slots = resources.get(SLOT, 0) >= 1
        self.slots = max(1, int(resources.get(SLOT if self.uses_slots else "CPU", 1)))
        room: dict[str, Any] = (
            {"resources": {SLOT: 1}, "num_cpus": 0} if self.uses_slots else {"num_cpus": 1}
        )
        self.remote = ray.remote(max_retries=retries, retry_exceptions=False, **room)(_run_on_node)
        self.running: dict[str, Any] = {}
        self.cancelled: set[str] = set()

    def describe(self) -> str:
        nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
        unit = SLOT if self.uses_slots else "CPU"
        return f"Ray: {nodes} node{'s' if nodes != 1 else ''}, {self.slots} {unit}"

    async def run(self, spec: TaskSpec, live: Live | None = None) -> TaskOutcome:
        ref = self.remote.remote(spec.to_json())
        self.running[spec.id] = ref
        try:
            outcome = TaskOutcome.from_json(await ref)
        except ray.exceptions.TaskCancelledError:
            return TaskOutcome(id=spec.id, status="cancelled", error="cancelled while it ran")
        except _LOST as error:
            if spec.id in self.cancelled:
                return TaskOutcome(id=spec.id, status="cancelled", error="cancelled while it ran")
            raise WorkerLost(f"the Ray worker or node died: {type(error).__name__}") from None
        except ray.exceptions.RayTaskError as error:
            return TaskOutcome(id=spec.id, status="error", error=f"the task raised: {error}")
        finally:
            self.running.pop(spec.id, None)
        if live is not None:  # the worker cannot tell us as it goes: tell now
            for seconds in outcome.rate_limited:
                live({"type": "rate_limited", "seconds": seconds})
        return outcome

    def cancel(self, task_id: str) -> None:
        if task_id in self.running:
            self.cancelled.add(task_id)
            ray.cancel(self.running[task_id])

    def kill(self) -> None:
        for ref in list(self.running.values()):
            ray.cancel(ref, force=True)

    async def close(self) -> None:
        """The driver's connection ends; a cluster started here ends with it."""
