"""A wheel built from the checkout starts as the ACP Registry starts it and answers the
registry CI's `initialize` (its `client.py`: `_meta["terminal-auth"]`) with sign-in methods
and the wheel's version, with no package index to reach.

The fast test installs the wheel with `--no-index` into a fresh environment whose other
packages are this one's. The `acp` tier runs `uv tool run --offline --from <wheel> agentls
acp`, as `uvx` runs a registry entry, once uv's cache holds the dependencies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from acp_wire import AcpWire

REPO = Path(__file__).parents[2]
PIP = [sys.executable, "-m", "pip"]
OFFLINE = ["--no-index", "--no-deps", "-q"]
OFFLINE_BUILD = [*OFFLINE, "--no-build-isolation"]
REGISTRY_CLIENT = {
    "terminal": True,
    "fs": {"readTextFile": True, "writeTextFile": True},
    "_meta": {"terminal_output": True, "terminal-auth": True},
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of a copy of the checkout (a build leaves `build/` where it runs)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "server", source / "server", ignore=shutil.ignore_patterns("*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [*PIP, "wheel", str(source), *OFFLINE_BUILD, "-w", str(out)],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("agentls-*.whl")
    return built


def _offline(tmp_path: Path) -> dict[str, str]:
    """An environment with no index and no way out: a proxy that is not there."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    dead = "http://127.0.0.1:9"
    return {
        **env,
        "PIP_NO_INDEX": "1",
        "UV_OFFLINE": "1",
        "HTTP_PROXY": dead,
        "HTTPS_PROXY": dead,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path / "home"),
    }


def _answers_the_registry_ci(
    command: list[str], env: dict[str, str], cwd: Path, wheel: Path
) -> None:
    wire = AcpWire(env, cwd, command)
    try:
        answer = wire.initialize(REGISTRY_CLIENT)
    finally:
        wire.close()
    version = wheel.name.split("-")[1]
    assert answer["agentInfo"]["version"] == version
    methods = {method["id"]: method.get("type", "agent") for method in answer["authMethods"]}
    assert methods == {"agentls-key": "agent", "agentls-login": "terminal"}


def test_the_wheel_starts_offline_in_a_fresh_environment(wheel: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=False)
    (site,) = fresh.glob("lib/python*/site-packages")
    # The dependencies are this environment's; agentls itself only the wheel's.
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = _offline(tmp_path)
    subprocess.run(
        [*PIP, "--python", str(fresh / "bin" / "python"), "install", *OFFLINE, str(wheel)],
        check=True,
        env=env,
        timeout=300,
    )
    location = subprocess.run(
        [str(fresh / "bin" / "python"), "-c", "import agentls; print(agentls.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert location.startswith(str(site)), "agentls comes from the wheel, not the checkout"
    _answers_the_registry_ci([str(fresh / "bin" / "agentls"), "acp"], env, tmp_path, wheel)


@pytest.mark.acp
def test_uv_tool_run_starts_the_wheel_offline(wheel: Path, tmp_path: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    cache = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    # The one step that needs the index: the dependencies into uv's cache.
    warm = [uv, "tool", "run", "--from", str(wheel), "agentls", "--version"]
    subprocess.run(warm, check=True, env=cache, timeout=600, capture_output=True)
    env = {**_offline(tmp_path), "UV_CACHE_DIR": cache["UV_CACHE_DIR"]}
    command = [uv, "tool", "run", "--offline", "--from", str(wheel), "agentls", "acp"]
    _answers_the_registry_ci(command, env, tmp_path, wheel)
