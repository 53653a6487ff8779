"""Fixtures shared by the end-to-end tests: the fake Messages API and a project folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_api import FakeAnthropic


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as api:
        yield api


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder
