"""Which documents may feed a completion prompt: a workspace opened at the home directory
does not send what its hidden folders hold (`~/.ssh`, `~/.aws`, ...), while a workspace that
is itself one of them (a dotfiles repository) is served."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentls.completions.privacy import Privacy
from agentls.permissions.rules import Rules


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in (".aws/credentials", ".ssh/id_ed25519", ".config/nvim/init.lua", "work/a.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("words\n")
    return tmp_path


def test_a_workspace_at_home_feeds_no_file_of_its_hidden_folders(home: Path) -> None:
    privacy = Privacy()
    for hidden in (".aws/credentials", ".ssh/id_ed25519", ".config/nvim/init.lua"):
        assert privacy.may_feed(home / hidden, [home], Rules()) is None, hidden
    assert privacy.may_feed(home / "work" / "a.py", [home], Rules()) == home


def test_a_link_into_a_hidden_folder_feeds_nothing_either(home: Path) -> None:
    (home / "work" / "notes.txt").symlink_to(home / ".aws" / "credentials")
    assert Privacy().may_feed(home / "work" / "notes.txt", [home / "work"], Rules()) is None


def test_a_workspace_inside_a_hidden_folder_is_served(home: Path) -> None:
    nvim = home / ".config" / "nvim"
    assert Privacy().may_feed(nvim / "init.lua", [nvim], Rules()) == nvim
