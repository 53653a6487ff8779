"""The VS Code extension (editor-clients/vscode): its unit tests (mocha), and the end-to-end
test of the packaged extension in a real VS Code (code-server, driven by playwright-core)
against the fake Messages API.

Both are the `vscode` tier (`pytest -m vscode`; plain `pytest` leaves them out): they need
editor-clients/vscode/scripts/setup-e2e.sh to have run (.ci/run runs it). Asked for without
it, they fail, naming the script: a missing prerequisite must never pass as a skip.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editor-clients" / "vscode"
SETUP = "editor-clients/vscode/scripts/setup-e2e.sh"
CACHE = Path(
    os.environ.get("AGENTLS_VSCODE_E2E_CACHE", Path.home() / ".cache" / "agentls-vscode-e2e")
)
SCREENSHOTS = Path(tempfile.gettempdir()) / "agentls-vscode-e2e-screenshots"


def _missing(what: str) -> None:
    pytest.fail(f"{what}: run {SETUP} first (it installs the test prerequisites)", pytrace=False)


def _run(command: list[str], timeout: float, **kwargs) -> str:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, **kwargs
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed ({done.returncode}):\n{output[-6000:]}")
    return output


@contextmanager
def _build_lock() -> Iterator[None]:
    """Both tests compile into the same out/ folder; xdist may run them at once."""
    name = hashlib.sha256(str(EXTENSION).encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"agentls-vscode-build-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _node_modules() -> None:
    if shutil.which("npm") is None:
        _missing("npm is not on PATH")
    if not (EXTENSION / "node_modules" / ".package-lock.json").is_file():
        _missing(f"{EXTENSION / 'node_modules'} is missing")


def _e2e_paths() -> dict[str, str]:
    env_file = CACHE / "env"
    if not env_file.is_file():
        _missing(f"{env_file} is missing")
    paths = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    for name in ("AGENTLS_E2E_NODE24", "AGENTLS_E2E_CODE_SERVER", "AGENTLS_E2E_CHROMIUM"):
        if not os.access(paths.get(name, ""), os.X_OK):
            _missing(f"{name} ({paths.get(name)!r} from {env_file}) is not an executable")
    return paths


@pytest.mark.vscode
def test_extension_unit_tests() -> None:
    _node_modules()
    with _build_lock():
        output = _run(["npm", "run", "--silent", "test:unit"], timeout=180, cwd=EXTENSION)
    # A failure already failed the run; this catches a run that found no tests.
    passing = re.search(r"(\d+) passing", output)
    assert passing and int(passing.group(1)) > 0, output


_WIDENING = re.compile(r"command|approve|allowed|sandbox|url|endpoint|provider|host|port", re.I)
"""Names of settings that start a program, let commands run unasked, or choose where the
agent's requests or commands go."""


def test_no_folder_setting_starts_a_program_or_widens_approvals() -> None:
    """A repository's .vscode/settings.json must not set them (issue 9): they are scoped to
    the user's settings, and ignored in an untrusted folder."""
    package = json.loads((EXTENSION / "package.json").read_text())
    properties = package["contributes"]["configuration"]["properties"]
    sensitive = {key for key in properties if _WIDENING.search(key.removeprefix("agentls."))}
    assert {"agentls.server.command", "agentls.approveCommands", "agentls.allowedCommands"} <= (
        sensitive
    )
    untrusted = package["capabilities"]["untrustedWorkspaces"]
    assert untrusted["supported"] == "limited"
    for key in sorted(sensitive):
        assert properties[key].get("scope") in ("application", "machine"), key
        assert key in untrusted["restrictedConfigurations"], key


VSIX_FILES_AT_MOST = 19


def _vsix_files(vsix: Path) -> list[str]:
    with zipfile.ZipFile(vsix) as archive:
        return archive.namelist()


@pytest.mark.vscode
@pytest.mark.timeout(1500)  # packaging (300 s at most) and the scenarios (1080 s)
def test_extension_in_code_server(tmp_path: Path) -> None:
    """The scenarios of editor-clients/vscode/test/e2e/run.ts: @agentls in the Chat view
    (an image pasted there reaching the model's request), the palette's tasks and reviews,
    a background task started from the palette and reviewed from the Agent Tasks view
    (screenshots agent-tasks.png, background-review*.png), and a fresh profile without
    agentls on PATH that makes the extension's own environment from the wheel in the .vsix."""
    _node_modules()
    paths = _e2e_paths()
    vsix = tmp_path / "agentls.vsix"
    runner = tmp_path / "e2e"
    with _build_lock():
        _run(["npm", "run", "--silent", "compile"], 180, cwd=EXTENSION)
        _run(
            ["nice", "-n", "10", "npm", "run", "--silent", "package", "--", "--out", str(vsix)],
            300,
            cwd=EXTENSION,
            # The wheel the .vsix carries is built by this Python (scripts/wheel.mjs).
            env={**os.environ, "AGENTLS_PYTHON": sys.executable},
        )
        # A copy, so a concurrent compile cannot change the runner under our feet.
        shutil.copytree(EXTENSION / "out" / "test" / "e2e", runner)
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    env = {
        **os.environ,
        **paths,
        "NODE_PATH": str(EXTENSION / "node_modules"),
        "AGENTLS_E2E_PYTHON": sys.executable,
        "AGENTLS_E2E_REPO": str(REPO),
        "AGENTLS_E2E_VSIX": str(vsix),
        "AGENTLS_E2E_SCREENSHOTS": str(SCREENSHOTS),
    }
    # Niced (and so are code-server, chromium and the server it starts): the other tests'
    # timing checks run beside it under xdist and must not starve.
    files = _vsix_files(vsix)
    assert len(files) <= VSIX_FILES_AT_MOST, files
    assert "extension/dist/extension.js" in files
    assert [f for f in files if f.startswith("extension/server/agentls-") and f.endswith(".whl")]
    assert not [f for f in files if "node_modules" in f or f.endswith((".ts", ".map"))], files
    output = _run(["nice", "-n", "10", "node", str(runner / "run.js")], 1080, env=env, cwd=tmp_path)
    print(output)
    assert "all scenarios passed" in output, output
