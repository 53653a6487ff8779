"""Signing in to an HTTP MCP server (`mcp_servers/oauth_server.py`: the SDK's authorization
server, tokens that live 2 seconds) through the terminal door: the sign-in, the refresh of an
expired token, where the tokens are (and are not), and `agentls mcp logout`."""

from __future__ import annotations

import json
import logging
import os
import shlex
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentls.extensions.mcp_user import open_in_browser
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import agentls, run
from terminal.test_terminal_conversation import Terminal, _env

SERVER = Path(__file__).parent / "mcp_servers" / "oauth_server.py"


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def secure(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The server's URL and the log of its token endpoint's uses."""
    port, log = _port(), tmp_path / "token-endpoint.log"
    process = subprocess.Popen([sys.executable, str(SERVER), str(port), str(log)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp", log
    process.terminate()
    process.wait(10)


class Opened:
    """What the browser was given, and the variables it saw."""

    def __init__(self, folder: Path) -> None:
        self.log, self.env = folder / "opened.txt", folder / "env.txt"

    def urls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def browser(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Opened:
    """A browser whose user is signed in, started as agentls starts any browser (`BROWSER`,
    through the launcher): it follows the authorization URL to the redirect."""
    opened = Opened(tmp_path_factory.mktemp("browser"))
    follow = Path(__file__).parent / "conformance" / "browser.py"
    script = f'echo "$0" >> {opened.log}; env > {opened.env}; exec {sys.executable} {follow} "$0"'
    monkeypatch.setenv("BROWSER", f"/bin/sh -c {shlex.quote(script)} %s")
    return opened


def _settings(root: Path, url: str) -> None:
    folder = root / ".config" / "agentls"
    folder.mkdir(parents=True, exist_ok=True)
    server = {"type": "http", "url": url}
    settings = {"mcpServers": {"secure": server}, "mcpStartupTimeout": 30, "mcpAuthTimeout": 30}
    (folder / "settings.json").write_text(json.dumps(settings))


def test_a_token_is_kept_privately_refreshed_once_expired_and_removed_by_logout(
    tmp_path: Path,
    state_home: Path,
    fake: FakeAnthropic,
    secure: tuple[str, Path],
    browser: Opened,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    url, endpoint_log = secure
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    _settings(workspace, url)
    call = reply(tool_use("mcp__secure__whoami", {}))
    fake.script(call, reply(text("done")))
    first = run(workspace, fake, "--yes", "-p", "who am I?")
    assert first.returncode == 0, first.stderr
    assert "sign in to the MCP server secure: open http://127.0.0.1:" in first.stderr
    (url,) = browser.urls()
    assert "code_challenge=" in url
    assert "ANTHROPIC_API_KEY" not in browser.env.read_text()  # a browser is a child too
    (token_file,) = (state_home / "agentls" / "mcp-auth").glob("*.json")
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    first_tokens = json.loads(token_file.read_text())["tokens"]

    time.sleep(2.5)  # the access token expired
    fake.script(call, reply(text("done")))
    second = run(workspace, fake, "--yes", "-p", "who am I now?")
    assert second.returncode == 0, second.stderr
    assert endpoint_log.read_text().split() == ["code", "refresh"]  # refreshed, no new sign-in
    assert len(browser.urls()) == 1
    second_tokens = json.loads(token_file.read_text())["tokens"]
    assert second_tokens["access_token"] != first_tokens["access_token"]
    results = [json.dumps(r.body["messages"][-1]) for r in fake.requests if r.body["messages"]]
    assert sum("signed in" in told for told in results) == 2

    secrets = {
        first_tokens["access_token"],
        first_tokens["refresh_token"],
        second_tokens["access_token"],
        second_tokens["refresh_token"],
    }
    sent = json.dumps([r.body for r in fake.requests])
    logged = "\n".join(record.getMessage() for record in caplog.records)
    shown = first.stdout + first.stderr + second.stdout + second.stderr
    in_workspace = "\n".join(
        p.read_text(errors="replace") for p in workspace.rglob("*") if p.is_file()
    )
    for secret in secrets:
        assert secret not in sent and secret not in logged
        assert secret not in shown and secret not in in_workspace

    out = agentls(workspace, fake, "mcp", "logout", "secure")
    assert out.returncode == 0 and "secure: signed out" in out.stdout
    assert not token_file.exists()
    again = agentls(workspace, fake, "mcp", "logout", "secure")
    assert "secure: not signed in" in again.stdout


def test_mcp_list_says_a_server_needs_a_sign_in_without_starting_one(
    tmp_path: Path, fake: FakeAnthropic, secure: tuple[str, Path], browser: Opened
) -> None:
    url, _ = secure
    _settings(tmp_path, url)
    listed = agentls(tmp_path, fake, "mcp", "list")
    assert "secure (settings): needs sign-in: " + url in listed.stdout
    assert "agentls mcp login secure" in listed.stdout
    assert browser.urls() == []
    logged_in = agentls(tmp_path, fake, "mcp", "login", "secure")
    assert "secure: signed in" in logged_in.stdout, logged_in.stdout + logged_in.stderr
    assert len(browser.urls()) == 1
    listed = agentls(tmp_path, fake, "mcp", "list")
    assert "secure (settings): connected: " in listed.stdout
    assert "tools: whoami" in listed.stdout


def test_a_browser_is_never_one_from_a_path_entry_inside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A shell that activated the repository's .venv has its bin first on PATH: a `BROWSER`
    # named by a bare name is the user's own one, found past it, as every program agentls
    # starts is (`shell/launch.py`).
    workspace, mine, log = tmp_path / "repo", tmp_path / "bin", tmp_path / "opened.txt"
    planted = workspace / ".venv" / "bin"
    for folder in (planted, mine):
        folder.mkdir(parents=True)
        opener = folder / "agentls-test-opener"
        opener.write_text(f'#!/bin/sh\necho "{folder} $1" >> {log}\n')
        opener.chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{mine}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BROWSER", "agentls-test-opener")
    open_in_browser("http://127.0.0.1:1/authorize", workspace)
    deadline = time.monotonic() + 10
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.read_text() == f"{mine} http://127.0.0.1:1/authorize\n"


def test_a_conversation_begun_at_the_first_prompt_shows_the_sign_in_url(
    tmp_path: Path,
    state_home: Path,
    fake: FakeAnthropic,
    secure: tuple[str, Path],
    browser: Opened,
) -> None:
    """A real terminal, its first prompt drawn before the SDK loads: the sign-in's URL is
    printed in the conversation, the browser opened, the tool called once signed in."""
    url, _ = secure
    _settings(tmp_path, url)
    fake.script(reply(tool_use("mcp__secure__whoami", {})), reply(text("You are you.")))
    shell = Terminal(tmp_path, _env(tmp_path, fake, "xterm-256color"), "--yes")
    try:
        shell.expect("Ctrl-D leaves.")
        shell.type("who am I?\r")
        shell.expect("sign in to the MCP server secure: open http://127.0.0.1:")
        shell.expect("You are you.", timeout=60)
        assert len(browser.urls()) == 1
        told = json.dumps(fake.requests[1].body["messages"][-1])
        assert "signed in" in told
        shell.expect("agentls>")
        shell.type("\x04")
        assert shell.process.wait(timeout=60) == 0
    finally:
        shell.close()
