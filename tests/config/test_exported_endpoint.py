"""The shell's exported endpoint wins whichever of the user's sources holds the key (issue 40,
row 1): a company gateway or a local proxy exported in the shell is where the task goes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

AGENTLS = Path(sys.executable).with_name("agentls")


def _check_model(home: Path, shell: dict[str, str]) -> str:
    """`agentls check-model` as typed in a shell with a fresh HOME and `shell` exported."""
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        **shell,
    }
    done = subprocess.run(
        [str(AGENTLS), "check-model", "{}"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("service", "provider"), [("ANTHROPIC", "anthropic"), ("OPENAI", "openai")]
)
def test_the_exported_endpoint_wins_over_the_key_files_own(
    tmp_path: Path, service: str, provider: str
) -> None:
    config = tmp_path / ".config" / "agentls"
    config.mkdir(parents=True)
    (config / ".env").write_text(f"{service}_API_KEY=sk-in-the-file\nAGENTLS_MODEL=m-1\n")
    shell = {f"{service}_BASE_URL": "https://gateway.example/v1", "AGENTLS_PROVIDER": provider}
    shown = _check_model(tmp_path, shell)
    assert "at https://gateway.example/v1 " in shown
    assert f"{service}_BASE_URL from the environment" in shown
    assert "sk-in-the-file" not in shown
    # The file's own endpoint beside its key loses to the exported one too.
    (config / ".env").write_text(
        f"{service}_API_KEY=sk-in-the-file\n{service}_BASE_URL=https://file.example\n"
        "AGENTLS_MODEL=m-1\n"
    )
    assert "at https://gateway.example/v1 " in _check_model(tmp_path, shell)
    # Without the export, the file's endpoint goes with the file's key.
    del shell[f"{service}_BASE_URL"]
    shown = _check_model(tmp_path, shell)
    assert "at https://file.example " in shown
    assert f"{service}_BASE_URL from {config / '.env'}" in shown
