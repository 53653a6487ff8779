"""A repository (or a model) must never choose what agentls's own git processes execute,
and the tools never change git's metadata (issue 9, finding 1)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from agentls.disk import safe_git
from agentls.disk.safe_git import safe_git_command, safe_git_env
from agentls.interfaces import CheckpointMark
from agentls.tools import run_tool
from doubles import tool_context as context


def _hostile_hook(root: Path) -> tuple[Path, Path]:
    """A script that leaves a mark when run, and the mark's path."""
    mark = root.parent / "ran"
    script = root.parent / "hook.sh"
    script.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    script.chmod(0o755)
    return script, mark


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", *arguments], cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize("tool", ["list_files", "grep"])
async def test_a_repositorys_fsmonitor_is_never_run(root: Path, tool: str) -> None:
    _git(root, "init", "-q")
    (root / "a.py").write_text("x = 1\n")
    _git(root, "add", "a.py")
    script, mark = _hostile_hook(root)
    _git(root, "config", "core.fsmonitor", str(script))
    text, error = await run_tool(context(root), tool, {"pattern": "x"} if tool == "grep" else {})
    assert not error and "a.py" in text
    assert not mark.exists()


async def test_a_bare_repository_made_of_plain_files_is_not_used(root: Path) -> None:
    """HEAD, config, objects/ and refs/ written at the root (four write_file calls) make it a
    bare repository for git's discovery; its config must not run anything either."""
    script, mark = _hostile_hook(root)
    (root / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "config").write_text(
        f"[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = {script}\n"
    )
    for folder in ("objects", "refs"):
        (root / folder).mkdir()
        (root / folder / "keep").write_text("")
    text, error = await run_tool(context(root), "list_files", {})
    assert not error and "HEAD" in text
    assert not mark.exists()


@pytest.mark.parametrize(
    "path", [".git/config", ".git", "sub/.git", "sub/.git/hooks/pre-commit", ".GIT/config"]
)
async def test_the_tools_never_write_git_metadata(root: Path, path: str) -> None:
    ctx = context(root)
    text, error = await run_tool(ctx, "write_file", {"path": path, "content": "[core]\n"})
    assert error and "git's metadata" in text
    assert ctx.workspace.proposals == []  # type: ignore[attr-defined]
    assert not (root / path).exists()


async def test_edit_file_never_changes_an_existing_git_config(root: Path) -> None:
    _git(root, "init", "-q")
    before = (root / ".git" / "config").read_text()
    ctx = context(root)
    (root / "gitdir").symlink_to(root / ".git")
    for path in (".git/config", "gitdir/config"):
        text, error = await run_tool(
            ctx,
            "edit_file",
            {"path": path, "old_text": "[core]", "new_text": "[core]\n\tfsmonitor = x"},
        )
        assert error and "git's metadata" in text
    assert (root / ".git" / "config").read_text() == before
    # Reading it stays allowed: it is how a model learns the remote or the branch.
    text, error = await run_tool(ctx, "read_file", {"path": ".git/config"})
    assert not error and "[core]" in text


def test_safe_git_reads_no_global_config_and_overrides_programs(tmp_path: Path) -> None:
    env = safe_git_env({"PATH": os.environ["PATH"], "GIT_DIR": "/elsewhere", "HOME": "/h"})
    assert "GIT_DIR" not in env and env["GIT_CONFIG_NOSYSTEM"] == "1"
    command = safe_git_command(["config", "--get", "core.fsmonitor"])
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _git(tmp_path, "config", "core.fsmonitor", "/bin/echo")
    _git(tmp_path, "config", "core.pager", "/bin/echo")
    found = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert found.stdout.strip() == "false"


PLANTS = {
    "a filter in its config": "config",
    "its settings moved by commondir": "commondir",
    "a filter turned on in its attributes": "info/attributes",
}


@pytest.mark.parametrize("plant", PLANTS)
def test_the_checkpoints_git_reads_only_settings_agentls_wrote(
    root: Path, tmp_path: Path, plant: str
) -> None:
    """What a command wrote into the checkpoints' own repository (its state folder inside
    the workspace, or a command run unsandboxed) is not what agentls's git runs."""
    from agentls.history.checkpoints import ShadowRepository

    script, mark = _hostile_hook(root)
    hostile = f'[core]\n\tfsmonitor = {script}\n[filter "x"]\n\tclean = {script}\n'
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config").write_text(hostile)
    (root / ".gitattributes").write_text("* filter=x\n")
    (root / "a.txt").write_text("one\n")
    repository = ShadowRepository(root, tmp_path / "shadow")
    repository.record(CheckpointMark(kind="task", session="s", task=1, step=None, label="first"))
    planted = {
        "config": hostile,
        "commondir": str(elsewhere),
        "info/attributes": "* filter=x\n",
    }[PLANTS[plant]]
    (repository.git_dir / PLANTS[plant]).write_text(planted)
    with open(repository.git_dir / "config", "a") as config:
        config.write(hostile)  # the filter, for attributes that turn it on
    (root / "a.txt").write_text("two\n")
    repository.record(CheckpointMark(kind="step", session="s", task=1, step=1, label="second"))
    assert not mark.exists()


def test_the_one_git_runner_never_finds_git_in_the_workspace_it_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A shell that activated the repository's .venv put it first on PATH; git runs in a
    # folder of its own (the sandbox's config check), for that workspace.
    workspace, elsewhere = tmp_path / "repo", tmp_path / "empty"
    planted = workspace / ".venv" / "bin"
    planted.mkdir(parents=True)
    elsewhere.mkdir()
    mark = tmp_path / "ran"
    (planted / "git").write_text(f"#!/bin/sh\ntouch {mark}\necho planted\n")
    (planted / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{os.environ['PATH']}")
    output = safe_git.run(["--version"], elsewhere, workspace=workspace)
    assert output.startswith(b"git version") and not mark.exists()
    with pytest.raises(safe_git.GitError, match=r"git rev-parse failed: .*not a git repository"):
        safe_git.run(["rev-parse", "HEAD"], elsewhere, workspace=workspace)
