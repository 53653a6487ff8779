"""The environment of a process that runs tasks (a batch's worker, a background task's
process): the launcher's allow-list, plus what configures the model, since that process is
agentls itself and reads its key as agentls does."""

from __future__ import annotations

import os

from ..shell import launch

_CONNECTION = ("_API_KEY", "_AUTH_TOKEN", "_BASE_URL", "_API_BASE")


def worker_environment(source: dict[str, str] | None = None) -> dict[str, str]:
    """The launcher's allow-list, plus what configures the model (`X_API_KEY`, `X_BASE_URL`,
    `AGENTLS_*`), which agentls reads as the user's own: the worker is agentls."""
    source = dict(os.environ if source is None else source)
    model = [n for n in source if n.endswith(_CONNECTION) or n.startswith("AGENTLS_")]
    return {**launch.environment(model, source), "PYTHONSAFEPATH": "1"}
