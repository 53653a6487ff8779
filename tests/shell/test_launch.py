"""The one launcher: the environment every program gets is an allow-list, a program is found
by an absolute path, and a user's program never starts in the workspace."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentls.shell import launch
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import run

SERVER_ENVIRONMENT = {
    "PATH": f"/usr/bin:.:node_modules/.bin::{Path(sys.executable).parent}",
    "HOME": "/home/u",
    "USER": "u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "XDG_CACHE_HOME": "/home/u/.cache",
    "TERM": "xterm",
    "TZ": "UTC",
    # Keys whose names a block list would have to guess.
    "AWS_BEARER_TOKEN_BEDROCK": "bedrock-bearer-0123456789",
    "BW_SESSION": "bitwarden-session-0123456789",
    "GOOGLE_CREDENTIALS": '{"private_key": "0123456789"}',
    "ANTHROPIC_API_KEY": "sk-ant-0123456789",
    # Variables that make a program run other code.
    "PYTHONPATH": ".",
    "PYTHONSTARTUP": "evil.py",
    "NODE_OPTIONS": "--require ./evil.js",
    "LD_PRELOAD": "./evil.so",
    "BASH_ENV": "./evil.sh",
    "GIT_DIR": "/tmp/elsewhere",
    "RIPGREP_CONFIG_PATH": "./rgrc",
    "JAVA_HOME": "/opt/java",
}


def test_every_program_gets_the_allow_list_and_what_the_user_names() -> None:
    env = launch.environment(source=SERVER_ENVIRONMENT)
    assert env == {
        "PATH": f"/usr/bin:{Path(sys.executable).parent}",
        "HOME": "/home/u",
        "USER": "u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "XDG_CACHE_HOME": "/home/u/.cache",
        "TERM": "xterm",
        "TZ": "UTC",
    }
    named = launch.environment(["JAVA_HOME"], source=SERVER_ENVIRONMENT)
    assert named == {**env, "JAVA_HOME": "/opt/java"}


def test_a_program_is_never_found_through_a_relative_path_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "git"
    planted.write_text("#!/bin/sh\ntouch pwned\n")
    planted.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    found = launch.program_path("git", f".:{os.environ['PATH']}")
    assert found != str(planted) and os.path.isabs(found)
    with pytest.raises(FileNotFoundError):
        launch.program_path("git", ".")
    with pytest.raises(FileNotFoundError, match="absolute path"):
        launch.program_path("./git")


def test_a_program_is_never_found_in_the_workspace_through_an_absolute_entry(
    tmp_path: Path,
) -> None:
    """A shell that activated the repository's `.venv` put `<workspace>/.venv/bin` first on
    PATH: agentls's git (or a hook's sh) must not be the repository's."""
    planted = tmp_path / ".venv" / "bin" / "git"
    planted.parent.mkdir(parents=True)
    planted.write_text("#!/bin/sh\ntouch pwned\n")
    planted.chmod(0o755)
    env = {"PATH": f"{planted.parent}:{os.environ['PATH']}"}
    argv = ["git", "--version"]
    for program in (
        launch.own(argv, tmp_path / "empty", env, tmp_path),
        launch.reader(argv, tmp_path, env),
        launch.in_workspace(argv, tmp_path, env, None),
        launch.on_host(argv, tmp_path / "elsewhere", tmp_path, env),
    ):
        assert program.argv[0] != str(planted) and os.path.isabs(program.argv[0])
    with pytest.raises(FileNotFoundError):
        launch.own(argv, tmp_path / "empty", env, None)  # which workspace to avoid? named whole


def test_a_users_program_starts_in_a_private_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "trap.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w')\n")
    script = (
        "import os, sys; print(os.getcwd(), os.listdir('.'), os.environ['AGENTLS_PROJECT_DIR'])"
    )
    with launch.private_folder() as folder:
        program = launch.on_host(
            [Path(sys.executable).name, "-c", script],
            folder,
            tmp_path,
            {"PATH": str(Path(sys.executable).parent)},
        )
        done = launch.run(program, capture_output=True, check=True)
        trap = launch.on_host([sys.executable, "-m", "trap"], folder, tmp_path, {})
        assert launch.run(trap, capture_output=True).returncode != 0
    cwd, listed, project = done.stdout.decode().rsplit(" ", 2)
    assert Path(cwd) == folder and listed == "[]" and project.strip() == str(tmp_path)
    assert program.env["PYTHONSAFEPATH"] == "1" and not folder.exists()
    assert not (tmp_path / "ran").exists()


def test_a_command_sees_no_key_of_the_server_and_what_the_user_passes(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "BW_SESSION", "GOOGLE_CREDENTIALS", "JAVA_HOME"):
        monkeypatch.setenv(name, SERVER_ENVIRONMENT[name])
    settings = tmp_path / ".config" / "agentls" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"passEnvironment": ["JAVA_HOME"]}))
    fake.script(reply(tool_use("bash", {"command": "printenv | base64 -w0"})), reply(text("ok")))
    done = run(tmp_path, fake, "--yes", "-p", "show the environment")
    assert done.returncode == 0, done.stderr
    result = fake.requests[1].body["messages"][-1]["content"][0]["content"]
    shown = base64.b64decode(result.split("\n", 1)[1]).decode()
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "BW_SESSION", "GOOGLE_CREDENTIALS", "ANTHROPIC"):
        assert name not in shown
    assert "JAVA_HOME=/opt/java" in shown and "PATH=" in shown


def test_one_group_kill_ends_the_program_and_what_it_started(tmp_path: Path) -> None:
    # The program leaves a child in the background and exits; the kill of its group (on
    # what the launcher returned) reaches the child too.
    script = "sleep 60 & echo $!; wait"
    started = launch.own(["/bin/sh", "-c", script], tmp_path, launch.environment(), None)
    process = launch.popen(started, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    child = int(process.stdout.readline())
    launch.kill_group(process)
    assert process.wait(timeout=10) == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _running(child)
    launch.kill_group(process.pid)  # a group already gone is no error


def _running(pid: int) -> bool:
    # A zombie (the child's parent died, init has not reaped it yet) is not running.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
