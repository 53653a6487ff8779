"""The user's config `.env` as a sign-in and a sign-out change it: the key's lines only, the
file private, written whole, and never through a link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from agentls.config import keys
from agentls.config.environment import DotEnv


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "agentls"


def test_a_key_is_written_private_beside_the_other_lines(config: Path) -> None:
    config.mkdir(parents=True, mode=0o755)
    (config / ".env").write_text("# mine\nANTHROPIC_API_KEY=old\nexport OPENAI_API_KEY=o\n")
    os.chmod(config / ".env", 0o644)
    keys.set_key("ANTHROPIC_API_KEY", "sk-new 'quoted' \\ $HOME #x")
    assert stat.S_IMODE((config / ".env").stat().st_mode) == 0o600
    assert stat.S_IMODE(config.stat().st_mode) == 0o700
    lines = (config / ".env").read_text().splitlines()
    assert lines[:2] == ["# mine", "export OPENAI_API_KEY=o"]
    assert DotEnv.read(config / ".env").values["ANTHROPIC_API_KEY"] == "sk-new 'quoted' \\ $HOME #x"
    assert [p.name for p in config.iterdir()] == [".env"], "no temporary file left"


def test_a_sign_out_removes_only_that_providers_lines(config: Path) -> None:
    config.mkdir(parents=True)
    (config / ".env").write_text("A=1\nANTHROPIC_API_KEY=k\n export ANTHROPIC_AUTH_TOKEN = t\n")
    assert keys.remove_keys(("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")) is True
    assert (config / ".env").read_text() == "A=1\n"
    assert keys.remove_keys(("ANTHROPIC_API_KEY",)) is False


@pytest.mark.parametrize("value", ["", "two\nlines", "nul\0"])
def test_a_key_is_one_line_of_text(config: Path, value: str) -> None:
    with pytest.raises(ValueError):
        keys.set_key("ANTHROPIC_API_KEY", value)
    assert not (config / ".env").exists()


def test_a_link_in_the_files_place_is_neither_followed_nor_replaced(
    config: Path, tmp_path: Path
) -> None:
    config.mkdir(parents=True)
    target = tmp_path / "dotfiles.env"
    target.write_text("KEEP=1\n")
    (config / ".env").symlink_to(target)
    with pytest.raises(OSError, match="link"):
        keys.set_key("ANTHROPIC_API_KEY", "sk-x")
    with pytest.raises(OSError, match="link"):
        keys.remove_keys(("KEEP",))
    assert target.read_text() == "KEEP=1\n"
    assert (config / ".env").is_symlink()


def test_a_fifo_in_the_files_place_does_not_hold_the_sign_in(config: Path) -> None:
    config.mkdir(parents=True)
    os.mkfifo(config / ".env")
    with pytest.raises(OSError, match="not a regular file"):
        keys.set_key("ANTHROPIC_API_KEY", "sk-x")
