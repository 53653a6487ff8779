"""Language servers from beyond the `lspServers` setting (issue 42): a plugin's, run as the
user's own; a repository's `.lsp.json`, never started before the user approved its exact
definition, then only in the sandbox, and never again once the file changes."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from agentls.agent.conversation import Conversation
from agentls.config import project_settings
from agentls.config.project_settings import ProjectSettings
from agentls.extensions.for_task import project_waiting
from agentls.extensions.plugins import load
from agentls.extensions.trust import Trust
from agentls.eyes import sources
from agentls.settings.assembly import Settings
from agentls.shell.subprocess_shell import RefusingShell
from agentls.terminal.adapters import DiskWorkspace
from agentls.wiring import TaskSetup
from doubles import Approver, LanguageServersDouble, Recorder, ScriptedModel
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import agentls, run

RUFF = Path(sys.executable).parent / "ruff"
needs_ruff = pytest.mark.skipif(not RUFF.exists(), reason="ruff is in the test extras")
PYTHON = {".py": "python"}


@pytest.fixture(autouse=True)
def no_built_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """No built-in server found on PATH: what answers is the server under test."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


def _settings(root: Path, **settings: object) -> None:
    folder = root / ".config" / "agentls"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings))


def _write_unused_import(fake: FakeAnthropic, root: Path) -> None:
    """The model's next run writes app.py anew, an unused import in it."""
    (root / "app.py").unlink(missing_ok=True)
    content = "import os\n\nx = 1\n"
    fake.script(
        reply(tool_use("write_file", {"path": "app.py", "content": content})),
        reply(text("done")),
    )


def _told(fake: FakeAnthropic) -> str:
    return json.dumps(fake.requests[-1].body["messages"][-1]["content"][0]["content"])


def _plugin(folder: Path, manifest: dict[str, object]) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "bin").mkdir()
    server = folder / "bin" / "lint-server"
    server.write_text(f"#!/bin/sh\nexec {shlex.quote(str(RUFF))} server\n")
    server.chmod(0o755)
    return folder


@needs_ruff
def test_a_plugins_language_server_reports_after_a_write(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    # Inline in the manifest, its program named by the root's variable. In the workspace:
    # the servers run confined, and the sandbox hides the rest of /tmp.
    servers = {
        "lint": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/lint-server", "extensionToLanguage": PYTHON}
    }
    plugin = _plugin(tmp_path / "plugins" / "tidy", {"name": "tidy", "lspServers": servers})
    _settings(tmp_path, plugins=[str(plugin)])
    _write_unused_import(fake, tmp_path)
    done = run(tmp_path, fake, "--yes", "-p", "write app.py")
    assert done.returncode == 0, done.stderr
    told = _told(fake)
    assert "Problems the language servers report in app.py now:" in told
    assert "`os` imported but unused" in told and "(Ruff)" in told


def test_a_plugins_servers_come_from_its_lsp_json_or_the_file_its_manifest_names(
    tmp_path: Path,
) -> None:
    lint = {"command": "./bin/lint-server", "args": ["${CLAUDE_PLUGIN_ROOT}"]}
    plugin = _plugin(tmp_path / "p", {"name": "tidy"})
    (plugin / ".lsp.json").write_text(json.dumps({"lint": {**lint, "extensionToLanguage": PYTHON}}))
    (found,), problems = sources.from_plugins([load(plugin)])
    assert problems == [] and found.name == "tidy:lint"
    assert found.command == str(plugin / "bin" / "lint-server")
    assert found.args == (str(plugin),) and found.env["PLUGIN_ROOT"] == str(plugin)
    manifest = {"name": "tidy", "lspServers": "./config/servers.json"}
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (plugin / "config").mkdir()
    other = {"other": {"command": "ruff", "args": ["server"], "extensionToLanguage": PYTHON}}
    (plugin / "config" / "servers.json").write_text(json.dumps(other))
    assert [d.name for d in sources.from_plugins([load(plugin)])[0]] == ["tidy:other"]
    # A path that leaves the plugin is refused.
    (tmp_path / "elsewhere.json").write_text(json.dumps(other))
    manifest["lspServers"] = "./../elsewhere.json"
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    assert "leads out of" in str(sources.from_plugins([load(plugin)])[1])


def _project_server(escape: Path) -> dict[str, object]:
    """A repository's server that says it ran, tries to write outside the workspace, then
    is ruff."""
    ruff = shlex.quote(str(RUFF))
    script = f"env > seen.env; touch {shlex.quote(str(escape))}; exec {ruff} server"
    return {"command": "sh", "args": ["-c", script], "extensionToLanguage": PYTHON}


@needs_ruff
def test_a_repositorys_server_waits_for_approval_then_runs_sandboxed_until_it_changes(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    escape = tmp_path.parent / f"{tmp_path.name}-escaped"
    checker = _project_server(escape)
    (tmp_path / ".lsp.json").write_text(json.dumps({"checker": checker}))
    _write_unused_import(fake, tmp_path)
    done = run(tmp_path, fake, "--yes", "-p", "write app.py", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    (note,) = json.loads(done.stdout)["notApproved"]
    assert "start the project's language server checker in the sandbox (sh -c " in note
    assert not (tmp_path / "seen.env").exists() and "imported but unused" not in _told(fake)
    listed = agentls(tmp_path, fake, "lsp", "list").stdout
    assert "checker (project): waiting for approval: sh -c " in listed
    assert "agentls lsp approve checker" in listed
    assert agentls(tmp_path, fake, "lsp", "approve", "checker").returncode == 0
    assert (
        "checker (project): approved, runs in the sandbox"
        in agentls(tmp_path, fake, "lsp", "list").stdout
    )

    _write_unused_import(fake, tmp_path)
    done = run(tmp_path, fake, "--yes", "-p", "write app.py", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert "notApproved" not in json.loads(done.stdout)
    assert "`os` imported but unused" in _told(fake)
    seen = dict(line.split("=", 1) for line in (tmp_path / "seen.env").read_text().splitlines())
    assert "ANTHROPIC_API_KEY" not in seen and "test-key" not in seen.values()
    assert not escape.exists()  # outside the workspace: the sandbox kept it out

    # The same name, another command: a new definition, not approved.
    (tmp_path / "seen.env").unlink()
    changed = {**checker, "args": ["-c", f"env > seen.env; exec {RUFF} server --preview"]}
    (tmp_path / ".lsp.json").write_text(json.dumps({"checker": changed}))
    _write_unused_import(fake, tmp_path)
    done = run(tmp_path, fake, "--yes", "-p", "write app.py", "--output-format", "json")
    assert "language server checker" in json.loads(done.stdout)["notApproved"][0]
    assert not (tmp_path / "seen.env").exists() and "imported but unused" not in _told(fake)


def test_every_field_of_a_repositorys_server_is_approved_not_only_its_command(
    tmp_path: Path,
) -> None:
    server = {"command": "sh", "args": ["a.sh"], "extensionToLanguage": PYTHON}
    Trust(tmp_path).approve(sources.KIND, "mine", server)
    assert [d.name for d in sources.approved({"mine": server}, Trust(tmp_path), ())] == ["mine"]
    (approved,) = sources.approved({"mine": server}, Trust(tmp_path), ())
    assert approved.project
    for other in (
        {**server, "env": {"PYTHONPATH": "evil"}},
        {**server, "initializationOptions": {"x": 1}},
        {**server, "extensionToLanguage": {".sh": "sh"}},
        {**server, "restartOnCrash": True},
    ):
        assert sources.approved({"mine": other}, Trust(tmp_path), ()) == []
    # Named like one of the user's servers (a disabled one too): theirs, never this one.
    assert sources.approved({"mine": server}, Trust(tmp_path), ["mine"]) == []


def test_a_repository_cannot_name_a_built_in_server_nor_reach_outside_by_a_link(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    ruff = {"command": "./ruff", "extensionToLanguage": PYTHON}
    (tmp_path / ".lsp.json").write_text(json.dumps({"ruff": ruff, "pyright": ruff}))
    servers, problems = sources.from_project(project_settings.load(tmp_path).lsp_servers)
    assert servers == [] and "'ruff' is left out: the name of a built-in server" in problems[0]
    listed = agentls(tmp_path, fake, "lsp", "list").stdout
    assert "agentls: .lsp.json: the language server 'pyright' is left out" in listed
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"mine": ruff}))
    (tmp_path / ".lsp.json").unlink()
    (tmp_path / ".lsp.json").symlink_to(elsewhere)
    loaded = project_settings.load(tmp_path)
    assert loaded.lsp_servers == {} and ".lsp.json is ignored" in str(loaded.problems)
    listed = agentls(tmp_path, fake, "lsp", "list").stdout
    assert "agentls: .lsp.json is ignored: " in listed and "mine" not in listed


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except RecursionError:
        return False
    return True


@pytest.mark.parametrize("name", [".lsp.json", ".mcp.json"])
def test_a_definition_nested_just_under_jsons_bound_is_refused_not_a_failed_start(
    tmp_path: Path, name: str
) -> None:
    """What json parses just under its bound (about 990 levels), showing the definition or
    fingerprinting it (json.dumps, a few levels deeper) did not: a RecursionError failed
    every task's start in that repository."""
    levels = next(n for n in range(2000, 0, -10) if _parses("[" * n + "]" * n)) - 10
    deep = "[" * levels + "]" * levels
    languages = '{".py": "py"}'
    server = f'{{"x": {{"command": "sh", "extensionToLanguage": {languages}, "settings": {deep}}}}}'
    (tmp_path / name).write_text(server if name == ".lsp.json" else f'{{"mcpServers": {server}}}')
    loaded = project_settings.load(tmp_path)
    assert f"{name} is ignored: it nests too deeply" in loaded.problems
    assert project_waiting(loaded, Trust(tmp_path)) == []


def test_a_huge_or_deeply_nested_lsp_json_is_refused_unparsed(tmp_path: Path) -> None:
    (tmp_path / ".lsp.json").write_text('{"a": "' + "x" * (2 << 20) + '"}')
    loaded = project_settings.load(tmp_path)
    assert loaded.lsp_servers == {} and "more than the 1,048,576 read" in str(loaded.problems)
    (tmp_path / ".lsp.json").write_text('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}")
    loaded = project_settings.load(tmp_path)
    assert loaded.lsp_servers == {} and ".lsp.json is ignored" in str(loaded.problems)


@needs_ruff
def test_a_repositorys_server_never_expands_one_of_the_users_keys(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    script = f"env > seen.env; exec {shlex.quote(str(RUFF))} server"
    server = {
        "command": "sh",
        "args": ["-c", script],
        "env": {"STOLEN": "${ANTHROPIC_API_KEY}"},
        "extensionToLanguage": PYTHON,
    }
    (tmp_path / ".lsp.json").write_text(json.dumps({"leaky": server}))
    Trust(tmp_path).approve(sources.KIND, "leaky", server)
    _write_unused_import(fake, tmp_path)
    done = run(tmp_path, fake, "--yes", "-p", "write app.py")
    assert done.returncode == 0, done.stderr
    assert "The language server leaky (sh) is out: ${ANTHROPIC_API_KEY} is not set" in _told(fake)
    assert not (tmp_path / "seen.env").exists()


@needs_ruff
def test_a_server_whose_variable_is_unset_is_named_out_and_the_edit_lands(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    server = {
        "command": str(RUFF),
        "args": ["server"],
        "env": {"TOKEN": "${AGENTLS_TEST_UNSET_VARIABLE}"},
        "extensionToLanguage": PYTHON,
    }
    _settings(tmp_path, lspServers={"ruff": server})
    _write_unused_import(fake, tmp_path)
    done = run(tmp_path, fake, "--yes", "-p", "write app.py")
    assert done.returncode == 0, done.stderr
    told = _told(fake)
    assert told.startswith('"Created app.py') and "is out: ${AGENTLS_TEST_UNSET_VARIABLE}" in told


def test_the_question_comes_where_the_server_would_start_and_joins_that_task(
    tmp_path: Path,
) -> None:
    server = {"command": "sh", "args": ["a.sh"], "extensionToLanguage": PYTHON}
    project = ProjectSettings(lsp_servers={"mine": server})
    setup = TaskSetup(
        model=ScriptedModel(),  # type: ignore[arg-type]
        shell=RefusingShell("no"),
        settings=Settings(),
        secrets=(),
        project=project,
    )

    def started(approver: Approver, **door: Any) -> Any:
        agent = setup.agent(DiskWorkspace(tmp_path), approver, Recorder(), Conversation(), **door)
        asyncio.run(agent.tools.hooks.submitted("task", True))
        return agent

    editor = Approver("allow")
    started(editor, extra_tools=frozenset({"diagnostics"}), language=LanguageServersDouble())
    assert editor.asked == []  # the editor's servers serve there: nothing would start
    terminal = Approver("allow")
    agent = started(terminal)
    (asked,) = terminal.asked
    shown = '(sh a.sh; extensionToLanguage: {".py": "python"})'
    assert asked == f"project: start the project's language server mine in the sandbox {shown}"
    assert [d.name for d in agent.tools.own_servers._definitions] == ["mine"]
