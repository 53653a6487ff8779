"""Real language servers for agentls's own eyes (issue 42): ruff from the test extras, pyright
from npm (tests/eyes/setup.sh, the `pyright` tier), their `lspServers` rows, what an edit of
`CONTENT` makes each say, and the processes a task started for a workspace, found on /proc."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

RUFF = Path(sys.executable).parent / "ruff"
PYRIGHT_CACHE = Path(
    os.environ.get("AGENTLS_PYRIGHT_CACHE") or Path.home() / ".cache" / "agentls-pyright"
)
PYRIGHT = PYRIGHT_CACHE / "node_modules" / ".bin" / "pyright-langserver"

CONTENT = 'import os\n\nx: int = "a"\n'
"""A file each server finds fault with: an unused import (ruff), a wrong type (pyright)."""
RUFF_SAYS = "app.py:1: warning: `os` imported but unused (Ruff)"
PYRIGHT_SAYS = 'app.py:3: error: Type "Literal[\'a\']" is not assignable to declared type "int"'


def ruff() -> dict[str, object]:
    return {"command": str(RUFF), "args": ["server"], "extensionToLanguage": {".py": "python"}}


def pyright() -> dict[str, object]:
    return {
        "command": str(PYRIGHT),
        "args": ["--stdio"],
        "extensionToLanguage": {".py": "python", ".pyi": "python"},
    }


def pyright_installed() -> Path:
    """The folder of `pyright-langserver`; fails where the tier is required
    (`AGENTLS_PYRIGHT=required`, as `.ci/run` sets), else skips, when it is missing."""
    if not PYRIGHT.exists():
        missing = f"no {PYRIGHT}: run tests/eyes/setup.sh"
        if os.environ.get("AGENTLS_PYRIGHT") == "required":
            pytest.fail(missing)
        pytest.skip(missing)
    return PYRIGHT.parent


def write_settings(config: Path, servers: dict[str, object]) -> None:
    """The user's settings file under the config folder `config` (XDG_CONFIG_HOME)."""
    folder = config / "agentls"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"lspServers": servers}))


def started_for(folder: Path) -> dict[int, tuple[str, dict[str, str]]]:
    """The host's live processes (zombies aside) started for a workspace in `folder` (the
    launcher puts its path in their `AGENTLS_PROJECT_DIR`): pid -> (command line,
    environment). The sandbox's own processes are among them, and what runs inside it."""
    marker = f"AGENTLS_PROJECT_DIR={folder}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if any(item.startswith(marker) for item in environ) and state != "Z":
            pairs = (item.decode(errors="replace").partition("=") for item in environ if item)
            env = {name: value for name, _, value in pairs}
            found[int(entry.name)] = (command.decode(errors="replace"), env)
    return found


def left_after(folder: Path, seconds: float = 5.0) -> list[str]:
    """The command lines of what still runs for a workspace in `folder` once `seconds` have
    passed."""
    deadline = time.monotonic() + seconds
    while (left := started_for(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [command for command, _ in left.values()]
