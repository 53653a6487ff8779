"""bash in the sandbox (bubblewrap): what a command can no longer do, and the settings.

Real bubblewrap throughout. CI installs it (`.ci/run`); elsewhere these tests skip only where
bubblewrap cannot run, and say why.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from agentls import redaction, wiring
from agentls.config.settings import Settings
from agentls.models.anthropic import ClientCache
from agentls.shell import sandbox
from agentls.shell.subprocess_shell import SubprocessShell
from agentls.tools import ToolContext, run_tool
from doubles import (
    BROKEN_BWRAP,
    Approver,
    MemoryEditor,
    path_with_a_broken_bwrap,
    running_argv,
    unique_seconds,
)
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsprotocol import types

FOUND = sandbox.find()
needs_sandbox = pytest.mark.skipif(
    isinstance(FOUND, sandbox.Unavailable) and not os.environ.get("CI"),
    reason=f"no sandbox here: {getattr(FOUND, 'reason', '')}",
)
pytestmark = needs_sandbox

SECRET = "sk-ant-sandbox-test-0123456789abcdef"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def context(
    root: Path, approver: Approver | None = None, network: bool = False, **settings: object
) -> ToolContext:
    assert not isinstance(FOUND, sandbox.Unavailable), FOUND.reason
    chosen = Settings(**{"approve_commands": "always", **settings})  # type: ignore[arg-type]
    shell = SubprocessShell(root, redaction.scrubbed(os.environ), (), FOUND, network)
    return ToolContext(MemoryEditor(root), shell, approver or Approver(), chosen)


async def bash(ctx: ToolContext, command: str) -> str:
    text, error = await run_tool(ctx, "bash", {"command": command})
    assert not error, text
    return text


async def test_a_command_writes_the_workspace_and_nothing_else(root: Path) -> None:
    outside = root.parent / "outside.txt"
    home = Path.home() / f".agentls-sandbox-test-{os.getpid()}"
    text = await bash(context(root), f"echo in > inside.txt; echo out > {outside}; touch {home}")
    assert (root / "inside.txt").read_text() == "in\n"
    assert not outside.exists() and not home.exists()
    assert "Read-only file system" in text
    assert "\n[sandbox] The sandbox refused a write" in text  # one line for the model


async def test_git_hooks_git_config_and_agentls_settings_and_state_stay_read_only(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    shutil.rmtree(root / ".git" / "hooks")  # a command must not be able to make it either
    config = root / ".git" / "config"
    before = config.read_text()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    (root / "xdg" / "agentls").mkdir(parents=True)
    (root / "state" / "agentls").mkdir(parents=True)
    command = (
        "echo 'touch pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;"
        " git config core.fsmonitor 'touch pwned'; echo X=1 > xdg/agentls/.env;"
        " echo '[filter \"x\"] clean = touch pwned' > state/agentls/config;"
        " echo ok > .git/description"
    )
    text = await bash(context(root), command)
    assert config.read_text() == before
    assert not (root / ".git/hooks/pre-commit").exists()
    assert not (root / "xdg/agentls/.env").exists()
    assert not (root / "state/agentls/config").exists()
    assert (root / ".git/description").read_text() == "ok\n"  # the rest of .git is the repo's
    assert "[sandbox]" in text


async def test_a_command_cannot_read_the_servers_environment(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    # base64 gets any secret past the literal redaction: the sandbox is what stops it.
    command = (
        f"cat /proc/$PPID/environ /proc/1/environ /proc/{os.getpid()}/environ"
        " /proc/self/environ; env; ls /proc"
    )
    text = await bash(context(root), f"({command}) 2>&1 | base64 -w0")
    shown = base64.b64decode(text.split("\n", 1)[1]).decode(errors="replace")
    assert SECRET not in shown and "ANTHROPIC_API_KEY" not in shown
    pids = sorted(int(name) for name in shown.split() if name.isdigit())
    assert str(os.getpid()) not in shown.split() and pids and max(pids) < 20, shown


async def test_no_network_unless_allowed(root: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        command = f"echo hi > /dev/tcp/127.0.0.1/{port} && echo connected"
        text = await bash(context(root), command)
        assert "connected" not in text and "Connection refused" in text
        assert "\n[sandbox] The sandbox has no network (setting sandboxNetwork)" in text
        text = await bash(context(root, network=True), command)
        assert text == "exit code 0\nconnected"


STARTS = {
    "setsid": "setsid sleep {s} &",
    "set -m": "set -m; sleep {s} &",
    # The interpreter itself, not a venv's link to it: a venv under /tmp is not in the
    # sandbox, whose /tmp is its own.
    "setpgid": f"{os.path.realpath(sys.executable)} -c 'import os; os.setpgid(0, 0); "
    'os.execvp("sleep", '
    '["sleep", "{s}"])\' &',
    "double fork": "(setsid sh -c 'sleep {s} &' &);",
}


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("end", ["exit", "timeout", "cancel"])
async def test_nothing_a_command_starts_outlives_it(root: Path, start: str, end: str) -> None:
    seconds = unique_seconds()
    command = STARTS[start].format(s=seconds) + " sleep 0.3; touch started;"
    command += " sleep 1" if end == "exit" else " sleep 60"
    ctx = context(root, bash_timeout=2.0)
    job = asyncio.ensure_future(run_tool(ctx, "bash", {"command": command}))
    for _ in range(500):
        if (root / "started").exists() or job.done():
            break
        await asyncio.sleep(0.02)
    assert running_argv("sleep", seconds), "the escapee never started"
    if end == "cancel":
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
    else:
        await job
    for _ in range(100):
        if not running_argv("sleep", seconds):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{start} survived {end}: {running_argv('sleep', seconds)}")


async def test_a_command_the_user_approved_leaves_the_sandbox_only_if_set(root: Path) -> None:
    outside = root.parent / "approved.txt"
    command = f"touch {outside}"
    ctx = context(root, Approver("allow"), approve_commands="ask")
    await run_tool(ctx, "bash", {"command": command})
    assert not outside.exists()
    ctx = context(
        root,
        Approver("allow"),
        approve_commands="ask",
        approved_commands_unsandboxed=True,
        allowed_commands=("sh write.sh",),
    )
    (root / "write.sh").write_text("touch ../allowed.txt\n")
    await run_tool(ctx, "bash", {"command": "sh write.sh"})  # allowed: never outside
    await run_tool(ctx, "bash", {"command": f"touch '{outside}'"})
    assert outside.exists() and not (root.parent / "allowed.txt").exists()
    assert ctx.approver.asked == [f"touch '{outside}'"]  # type: ignore[attr-defined]
    assert ctx.approver.unsandboxed == [True]  # type: ignore[attr-defined]  # and it was told


async def test_an_unavailable_sandbox_warns_or_refuses(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setattr(sandbox, "find", lambda: sandbox.Unavailable("no bwrap here"))
    auto = wiring.prepare_task(root, Settings(), ClientCache())
    assert auto.warning and "without a sandbox: no bwrap here" in auto.warning
    assert not auto.shell.sandboxed
    off = wiring.prepare_task(root, Settings(sandbox="off"), ClientCache())
    assert off.warning is None and not off.shell.sandboxed
    required = wiring.prepare_task(root, Settings(sandbox="required"), ClientCache())
    assert required.warning and "no bwrap here" in required.warning
    ctx = ToolContext(
        MemoryEditor(root), required.shell, Approver(), Settings(approve_commands="always")
    )
    text, error = await run_tool(ctx, "bash", {"command": "touch x"})
    assert error and 'the setting sandbox is "required"' in text and "no bwrap here" in text
    assert not (root / "x").exists()


def test_a_missing_bubblewrap_says_so() -> None:
    from agentls.shell.sandbox.bubblewrap import Bubblewrap

    assert Bubblewrap("agentls-no-such-bwrap").probe() == "bubblewrap (bwrap) is not installed"


async def test_the_server_sandboxes_by_default(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    connection = wiring.prepare_task(root, Settings(), ClientCache())
    assert connection.shell.sandboxed and connection.warning is None


async def test_a_workspace_env_file_cannot_weaken_the_sandbox(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    (root / ".env").write_text(
        "sandbox=off\nSANDBOX=off\nAGENTLS_SANDBOX=off\nsandboxNetwork=true\n"
        "AGENTLS_SANDBOX_NETWORK=true\napprovedCommandsUnsandboxed=true\n"
    )
    connection = wiring.prepare_task(root, Settings(), ClientCache())
    shell = connection.shell
    assert isinstance(shell, SubprocessShell) and shell.sandboxed and not shell.network
    assert not connection.settings.approved_commands_unsandboxed


async def test_the_editor_is_warned_once_when_bash_runs_unsandboxed(
    fake: FakeAnthropic, root: Path
) -> None:
    path = path_with_a_broken_bwrap(root.parent / "bin")
    async with editor(root, fake.url, env={"PATH": path}, process=True) as client:
        for _ in range(2):
            fake.script(reply(tool_use("bash", {"command": "echo hi"})), reply(text("ok")))
            assert (await client.run_task("go"))["status"] == "done"
        warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert warnings == [
        f"agentls: bash runs without a sandbox: bubblewrap fails here: {BROKEN_BWRAP}. Set "
        'agentls.sandbox to "required" to refuse bash then, or to "off" to silence this.'
    ]


async def test_the_question_says_when_allow_means_outside_the_sandbox() -> None:
    import io

    from agentls.lsp.approver import LspApprover
    from agentls.terminal.adapters import TerminalApprover
    from agentls.terminal.answers import Answers
    from agentls.terminal.screen import Screen

    stream = io.StringIO()
    await TerminalApprover(Screen(stream), Answers(None)).approve("make install", unsandboxed=True)
    assert "Run `make install` outside the sandbox? [y]es" in stream.getvalue()

    class Client:
        message = ""
        client_capabilities = types.ClientCapabilities()  # no agent/approveCommand

        async def window_show_message_request_async(
            self, params: types.ShowMessageRequestParams
        ) -> None:
            Client.message = params.message

    approver = LspApprover(Client(), Settings(), Path("."))  # type: ignore[arg-type]
    await approver.approve("make install", unsandboxed=True)
    assert Client.message == "The agent wants to run outside the sandbox:\nmake install"
