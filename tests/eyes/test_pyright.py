"""Tier pyright: agentls's own eyes with real pyright (npm, tests/eyes/setup.sh) and ruff found
on PATH as the built-in servers, under `agentls run -p`: each edit's result names what each
says of it, the second edit only its own new error; neither server is given a key, and none
runs once the run has ended."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_api import FakeAnthropic, Turn, reply, text, tool_use
from real_servers import (
    CONTENT,
    PYRIGHT_SAYS,
    RUFF_SAYS,
    left_after,
    pyright_installed,
    started_for,
)
from terminal.test_terminal import run

pytestmark = pytest.mark.pyright

SECRET = "ghp_eyes0tier0secret0never0shown"
"""A token in agentls's own environment: no server may see it, nor the model's key."""
SECOND = 'app.py:4: error: Type "Literal[1]" is not assignable to declared type "str" (Pyright)'


def _result(fake: FakeAnthropic, request: int) -> str:
    content = fake.requests[request].body["messages"][-1]["content"][0]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_pyright_and_ruff_on_path_name_each_edits_problems_under_p(
    root: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The built-in servers, found on PATH: pyright-langserver from the tier's cache, ruff
    # from the test extras (the venv's bin, which a test run need not have on PATH).
    on_path = [str(pyright_installed()), str(Path(sys.executable).parent), os.environ["PATH"]]
    monkeypatch.setenv("PATH", os.pathsep.join(on_path))
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    running: dict[int, tuple[str, dict[str, str]]] = {}

    def second_edit(body: Any) -> Turn:
        """Asked while the servers run (the first edit started them): what runs, and how,
        a while later (pyright once exited 3 s in, not finding agentls's pid)."""
        time.sleep(3.5)
        running.update(started_for(root))
        edit = {
            "path": "app.py",
            "old_text": 'x: int = "a"',
            "new_text": 'x: int = "a"\ny: str = 1',
        }
        return reply(tool_use("edit_file", edit))

    write = tool_use("write_file", {"path": "app.py", "content": CONTENT})
    fake.script(reply(write), second_edit, reply(text("done")))
    done = run(root, fake, "--yes", "-p", "write app.py")
    assert done.returncode == 0, done.stderr

    first = _result(fake, 1)
    assert first.startswith("Created app.py: 1 hunk accepted.\n")
    assert "Problems the language servers report in app.py now:" in first
    assert RUFF_SAYS in first.splitlines() and f"{PYRIGHT_SAYS} (Pyright)" in first.splitlines()
    second = _result(fake, 2)
    assert second.splitlines() == [
        "Edited app.py: 1 hunk accepted.",
        "New problems the language servers report since this edit:",
        SECOND,
    ]

    commands = [command for command, _ in running.values()]
    assert any("pyright-langserver --stdio" in command for command in commands), commands
    assert any(command.startswith("ruff server") for command in commands), commands
    for command, env in running.values():
        assert "ANTHROPIC_API_KEY" not in env and "GITHUB_TOKEN" not in env, command
        assert not {"test-key", SECRET} & set(env.values()), command
    assert left_after(root) == []
