"""The background tasks from the terminal: `agentls run --background` prints the id and
returns, `agentls tasks` lists, `agentls tasks review ID` asks hunk by hunk and writes what
was accepted, which `agentls undo --yes` takes back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from background_tasks import make_repository
from fake_api import FakeAnthropic, reply, text, tool_use

SOURCE = "".join(f"line {n}\n" for n in range(1, 13))


def agentls(root: Path, env: dict[str, str], *arguments: str, answers: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agentls", *arguments],
        cwd=root,
        env={**os.environ, **env},
        input=answers,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_run_background_then_tasks_review_and_undo(fake: FakeAnthropic, root: Path) -> None:
    make_repository(root, {"app.py": SOURCE})
    new = SOURCE.replace("line 2\n", "line two\n").replace("line 10\n", "line ten\n")
    fake.script_for(
        "Rename lines.",
        reply(tool_use("write_file", {"path": "app.py", "content": new})),
        reply(text("Renamed.")),
    )
    env = {
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "XDG_CONFIG_HOME": str(root.parent / "config"),
    }
    started = time.monotonic()
    task_id = agentls(root, env, "run", "--background", "Rename lines.").strip()
    assert len(task_id) == 8
    assert time.monotonic() - started < 30  # it returned; the task runs on
    deadline = time.monotonic() + 60
    while "done" not in (table := agentls(root, env, "tasks")):
        assert time.monotonic() < deadline, table
        time.sleep(0.3)
    assert task_id in table and "Rename lines." in table
    assert (root / "app.py").read_text() == SOURCE

    said = agentls(root, env, "tasks", "review", task_id, answers="n\ny\n")
    assert "hunk 1 of 2: change of line 2" in said
    assert "app.py: 1 of 2 accepted" in said
    assert (root / "app.py").read_text() == SOURCE.replace("line 10\n", "line ten\n")
    assert "(reviewed)" in agentls(root, env, "tasks")

    # Issue 40, row 8: a readable transcript of the task, not its JSONL.
    log = agentls(root, env, "tasks", "log", task_id).splitlines()
    assert log[0] == f"Background task {task_id}: Rename lines." and log[1].startswith("done · ")
    assert "▸ write_file: app.py" in log and log[-1] == "Renamed."
    assert "  ✓ Edited app.py: all 2 hunks accepted." in log
    assert not any(line.startswith("{") for line in log)

    agentls(root, env, "undo", "--yes")
    assert (root / "app.py").read_text() == SOURCE
    agentls(root, env, "tasks", "discard", task_id)
    assert "No background tasks" in agentls(root, env, "tasks")


def test_a_terminal_task_in_the_background_gets_the_users_network_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/background.md: a background task's sandbox has the network off unless
    `sandboxNetwork`; from the terminal, that is the user's own settings file's, as for the
    editor's tasks (the terminal once built its options apart and left it off)."""
    from agentls.terminal.background_commands import user_options

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "agentls").mkdir()
    settings = {"sandboxNetwork": True, "backgroundMaxRunning": 2, "maxSteps": 9}
    (tmp_path / "agentls" / "settings.json").write_text(json.dumps(settings))
    options = user_options(model="m")
    assert (options.sandbox_network, options.max_running) == (True, 2)
    assert (options.max_steps, options.model) == (9, "m")
