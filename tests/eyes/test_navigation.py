"""`definition` and `references` outside the LSP door (issue 42): asked of agentls's own
language servers with the LSP door's names, arguments and answer format, offered only where
a server serves the workspace; with none, the first request is what it was before."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from agentls.eyes import offer
from agentls.eyes.definitions import BUILT_IN, parse_servers
from agentls.eyes.offer import serves_workspace
from agentls.eyes.session import definitions
from agentls.tools import TOOLS
from eyes.test_own_servers import STUBBORN, _script, _settings
from fake_api import FakeAnthropic, reply, text, tool_use
from real_servers import RUFF, pyright_installed, ruff
from terminal.test_terminal import run

# An emoji is one character and two UTF-16 units: the position must count the latter.
APP = 'def greet(name):\n    return name\n\nmessage = "h😀"; greet(message)\n'


def _navigator(root: Path, mode: str = "navigate") -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": [str(_script(root)), mode, str(root / f"{mode}.env"), str(root / "pids")],
        "extensionToLanguage": {".py": "python"},
    }


def _results(fake: FakeAnthropic) -> list[str]:
    """Each tool result the model was given, in order."""
    return [request.body["messages"][-1]["content"][0]["content"] for request in fake.requests[1:]]


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is in the test extras")
def test_definition_and_references_answer_from_the_servers_under_p(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    (tmp_path / "app.py").write_text(APP)
    # ruff serves neither request, and `refuser` fails them: neither is taken for a server
    # that is out, the other's answer stands.
    refuser = _navigator(tmp_path, "refuse")
    _settings(tmp_path, {"nav": _navigator(tmp_path), "ruff": ruff(), "refuser": refuser})
    at = {"path": "app.py", "line": 4, "symbol": "greet"}
    edit = {"path": "app.py", "old_text": "def greet", "new_text": "import os\n\n\ndef greet"}
    fake.script(
        reply(tool_use("definition", at)),
        reply(tool_use("edit_file", edit)),
        reply(tool_use("references", {**at, "line": 7})),
        reply(tool_use("definition", {**at, "symbol": "nowhere"})),
        reply(text("done")),
    )
    done = run(tmp_path, fake, "--yes", "-p", "where is greet")
    assert done.returncode == 0, done.stderr
    tools = fake.requests[0].body["tools"]
    offered = {tool["name"]: tool for tool in tools}
    # The LSP door's own schemas, byte for byte.
    assert offered["definition"] == TOOLS["definition"].schema()
    assert offered["references"] == TOOLS["references"].schema()
    assert "diagnostics" not in offered and "symbols" not in offered
    defined, edited, used, missing = _results(fake)
    assert defined == "app.py:1: def greet(name):"
    assert "`os` imported but unused" in edited and "is out" not in edited
    assert "in time" not in edited
    # After the edit, the server has the new text: the lines moved by three.
    assert used == 'app.py:4: def greet(name):\napp.py:7: message = "h😀"; greet(message)'
    assert missing == "'nowhere' is not on line 4, which reads: def greet(name):"


def _first_request(root: Path, fake: FakeAnthropic) -> str:
    fake.script(reply(text("done")))
    done = run(root, fake, "-p", "hi")
    assert done.returncode == 0, done.stderr
    return json.dumps(fake.requests[-1].body, sort_keys=True)


def test_without_a_server_serving_the_workspace_the_first_request_is_unchanged(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no built-in server found
    (tmp_path / "README.md").write_text("# hi\n")
    today = _first_request(tmp_path, fake)  # no server at all: agentls's eyes are shut
    assert '"definition"' not in today
    # Never started here: the script need not be in the workspace.
    server = {"command": sys.executable, "args": [str(STUBBORN), "navigate"]}
    missing = {**server, "command": str(tmp_path / "no-such-server")}
    _settings(tmp_path, {"nav": {**missing, "extensionToLanguage": {".py": "python"}}})
    (tmp_path / "app.py").write_text(APP)
    assert _first_request(tmp_path, fake) == today  # its program does not exist
    _settings(tmp_path, {"nav": {**server, "extensionToLanguage": {".rs": "rust"}}})
    assert _first_request(tmp_path, fake) == today  # no file of its kind in the workspace
    _settings(tmp_path, {"nav": {**server, "extensionToLanguage": {".py": "python"}}})
    found = _first_request(tmp_path, fake)
    assert '"definition"' in found and '"references"' in found


def test_the_workspace_is_looked_at_without_following_links_and_within_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(offer, "MAX_ENTRIES", 50)
    (server,) = parse_servers(
        {"py": {"command": sys.executable, "extensionToLanguage": {".py": "python"}}}
    )
    root = tmp_path / "w"
    (root / ".venv").mkdir(parents=True)
    (root / ".venv" / "site.py").write_text("")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.py").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("")
    os.symlink(outside, root / "linked")
    os.symlink(outside / "o.py", root / "link.py")
    assert not serves_workspace((server,), root)
    for n in range(offer.MAX_ENTRIES):
        (root / f"{n}.txt").write_text("")
    (root / "deep").mkdir()
    (root / "deep" / "late.py").write_text("")
    assert not serves_workspace((server,), root)  # past the bound: not looked for
    (root / "0.txt").rename(root / "early.py")
    assert serves_workspace((server,), root)
    # ruff's server answers neither: found alone on PATH, it brings no navigation tools.
    (ruff,) = (d for row in BUILT_IN for d in row if d.name == "ruff")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ruff").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "ruff").chmod(0o755)
    assert definitions((), root, str(tmp_path / "bin")) == (ruff,)
    assert not serves_workspace((ruff,), root, str(tmp_path / "bin"))


@pytest.mark.pyright
def test_pyright_answers_definition_and_references(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join([str(pyright_installed()), os.environ["PATH"]]))
    (tmp_path / "app.py").write_text(APP)
    at = {"path": "app.py", "line": 4, "symbol": "greet"}
    fake.script(
        reply(tool_use("definition", at)),
        reply(tool_use("references", at)),
        reply(text("done")),
    )
    done = run(tmp_path, fake, "--yes", "-p", "where is greet")
    assert done.returncode == 0, done.stderr
    defined, used = _results(fake)
    assert defined == "app.py:1: def greet(name):"
    assert used == 'app.py:1: def greet(name):\napp.py:4: message = "h😀"; greet(message)'
