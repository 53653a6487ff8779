"""Fixtures shared by the end-to-end tests (the fake Messages API and a project folder), and
hypothesis's settings for every property test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
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
