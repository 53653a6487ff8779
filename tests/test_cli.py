"""The `agentls` command line: version, settings check, waiting for an editor."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from agentls import __version__, cli
from agentls.acp.door import WAITING_ACP
from agentls.cli import main
from agentls.lsp.door import WAITING


def test_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentls", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"agentls {__version__}"


def _check_settings(raw: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`agentls check-settings RAW` (main() in process: `--version` tests the entry point)."""
    status = main(["check-settings", raw])
    return status, capsys.readouterr().out


def test_check_settings_accepts_valid_settings(capsys: pytest.CaptureFixture[str]) -> None:
    done = _check_settings(json.dumps({"maxSteps": 20, "approveCommands": "always"}), capsys)
    assert done == (0, "agentls settings are valid\n")


def test_check_settings_reads_the_background_group_and_notes_the_old_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    grouped = _check_settings(json.dumps({"background": {"setup": "npm ci"}}), capsys)
    assert grouped == (0, "agentls settings are valid\n")
    status, out = _check_settings(json.dumps({"backgroundMaxRunning": 2}), capsys)
    assert status == 1
    assert out.startswith("agentls.backgroundMaxRunning is deprecated: write it as maxRunning")


def test_check_settings_names_each_problem(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check_settings(json.dumps({"maxSteps": 0, "colour": "red"}), capsys)
    assert status == 1
    assert out.splitlines() == [
        "agentls.maxSteps: expected a whole number from 1 to 1000; using the default 50",
        "unknown setting agentls.colour is ignored",
    ]
    status, out = _check_settings("{maxSteps", capsys)
    assert status == 1
    assert out.startswith("agentls settings are not JSON")


def test_run_holds_max_steps_to_the_settings_range(capsys: pytest.CaptureFixture[str]) -> None:
    for wrong in ["0", "-3", "5000", "x"]:
        with pytest.raises(SystemExit) as exited:
            main(["run", "task", "--max-steps", wrong])
        assert exited.value.code == 2, wrong
        assert "--max-steps: expected a whole number from 1 to 1000" in capsys.readouterr().err


@pytest.mark.parametrize("arguments", [[], ["--tcp", "--port", "0"], ["acp"]])
def test_a_user_trying_it_in_a_terminal_leaves_with_one_ctrl_c(
    arguments: list[str], tmp_path: Path
) -> None:
    terminal, child_end = pty.openpty()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", *arguments],
        stdin=child_end,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(child_end)
    try:
        assert process.stderr is not None
        first = process.stderr.readline().decode()
        if arguments == ["acp"]:
            assert first.strip() == WAITING_ACP
        elif arguments:
            assert first.startswith("agentls: serving LSP on 127.0.0.1:")
        else:
            # In a terminal it says what it waits for.
            assert first.strip() == WAITING
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == -signal.SIGINT
        rest = process.stderr.read().decode()
        assert "Traceback" not in rest and "Fatal Python error" not in rest
    finally:
        if process.poll() is None:
            process.kill()
        os.close(terminal)


@pytest.mark.parametrize("blank", ["", "  \n"])
def test_run_refuses_a_blank_task(blank: str, capsys: pytest.CaptureFixture[str]) -> None:
    # The API refuses an empty text block with a 400 that hints at the settings.
    with pytest.raises(SystemExit) as exited:
        cli.main(["run", blank])
    assert exited.value.code == 2
    assert "task: say what the agent should do" in capsys.readouterr().err


def test_check_model_and_check_settings_say_when_the_provider_has_no_search(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 38: webSearch on a provider that has none was taken without a word."""
    local = json.dumps({"provider": "ollama", "model": "qwen3", "webSearch": True})
    assert main(["check-model", local]) == 0
    said = "webSearch is on, but Ollama has no web search of its own"
    assert said in capsys.readouterr().out
    status, out = _check_settings(local, capsys)
    assert status == 0 and out.startswith(f"note: {said}") and out.endswith("are valid\n")
    anthropic = json.dumps({"webSearch": True, "model": "claude-sonnet-5-5"})
    with mock.patch.dict(os.environ, {"ANTHROPIC_API_KEY": "k"}):
        assert main(["check-model", anthropic]) == 0
    assert capsys.readouterr().out.endswith("web search: Anthropic's web_search\n")
