"""Fixtures shared by the end-to-end tests (the fake Messages API, a project folder, an editor
connected to an in-process server), the test tiers, and hypothesis's settings for every
property test."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from editor_client import EditorClient, editor
from fake_api import FakeAnthropic
from hypothesis import settings

# No per-example deadline (a loaded CI machine is slow, not wrong), and under CI the same
# examples every run, so a red run can be replayed.
settings.register_profile("agentls", deadline=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("agentls")


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as api:
        yield api
        # A failure inside a handler thread (a test's scripted turn that raised) would
        # otherwise show only as a confusing 400 far from its cause.
        assert api.errors == []


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Checkpoints and saved sessions go to the test's own folder, never the user's; servers
    the tests start inherit it."""
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
async def lsp_editor(fake: FakeAnthropic, root: Path) -> AsyncIterator[EditorClient]:
    """An editor with VS Code's capabilities, connected to a server built by `make_server()`
    in this process (no start-up, no SDK import per test); commands run without asking.
    For other capabilities or settings, use `editor_client.editor(...)`; for what only a
    real process shows (exit, signals, a closed pipe), `editor(..., process=True)`."""
    async with editor(root, fake.url) as client:
        yield client


TIERS = {
    "vscode": "needs code-server, chromium and Node (editor-clients/vscode/scripts/setup-e2e.sh)",
    "emacs": "needs Emacs with eglot (apt: emacs-nox elpa-eglot)",
    "debian_nvim": "needs Debian's Neovim (apt: neovim), not the one pip installs",
    "acp": "needs Node and the ACP TypeScript SDK (npm ci in tests/acp/acp_client)",
    "nvim": "Neovim 0.11 (from the test extras) drives the plugin: a minute of editor sessions",
    "bench": "the benchmarks' quick run (python -m bench --quick): a minute of CPU",
    "ray": "needs the ray extra (pip install '.[ray]'): small Ray clusters on loopback",
    "mcp_conformance": "needs the MCP conformance suite and Node 22 (npm: "
    "tests/extensions/conformance/setup.sh)",
    "real_server": "needs llama.cpp's llama-server built from PyPI's sdist and a small model "
    "(tests/real_server/setup.sh): minutes of CPU",
    "pyright": "needs pyright from npm (tests/eyes/setup.sh): agentls's own eyes with it",
}
"""Tests that need system packages, or take a minute of CPU each (the fast suite stays within
4 minutes on 2 cores). `pytest` alone deselects them (pyproject's addopts); `.ci/run`
installs each tier's packages and runs it with `pytest -m <tier>`."""


def pytest_configure(config: pytest.Config) -> None:
    for tier, needs in TIERS.items():
        config.addinivalue_line("markers", f"{tier}: {needs}")
