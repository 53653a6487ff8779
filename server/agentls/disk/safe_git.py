"""Running git without letting a repository choose what gets executed.

A repository's own `.git/config` (written by a hostile clone, a tarball, or a model) can name
programs for git to run: `core.fsmonitor` runs on any command that reads the index (`git
ls-files` included), and hooks, pagers, editors, credential helpers, ssh and proxy commands,
external diffs and transports do the same for other commands. Every git process agentls
starts goes through `safe_git_command`, which overrides each of those from the command line
(which beats the repository's config) and reads no system or global config at all. `run`
and `start` are the one way agentls runs git (checkpoints, a task's tree, search's file
list), with one identity for what it commits (`NAME`, `EMAIL`).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..shell import launch

_OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "core.sequenceEditor=false",
    "core.askPass=",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.alternateRefsCommand=",
    "core.untrackedCache=false",
    "credential.helper=",
    "diff.external=",
    "gpg.program=false",
    "protocol.allow=never",
    "submodule.recurse=false",
    # A folder holding HEAD, config, objects/ and refs/ (four write_file calls) would be a
    # bare repository found by discovery; only an explicit --git-dir may use one.
    "safe.bareRepository=explicit",
)
"""`-c` settings that disable every repository-configured program the commands agentls runs
could start. Filter and textconv drivers (`filter.<name>.clean`, `diff.<name>.textconv`)
cannot be listed ahead (any name will do), so a command that runs them (`add`, `diff`,
`checkout`, `status` on a dirty tree) must use a git dir whose config agentls writes itself,
such as a shadow repository with `--git-dir` and `--work-tree`; `ls-files` runs none."""

NAME = "agentls"
EMAIL = "agentls@localhost"
"""Who agentls's commits are by (checkpoints, a task's result, a background task's base):
never the user's identity, which the global config that agentls's git does not read holds."""

_ENV = {
    "GIT_AUTHOR_NAME": NAME,
    "GIT_AUTHOR_EMAIL": EMAIL,
    "GIT_COMMITTER_NAME": NAME,
    "GIT_COMMITTER_EMAIL": EMAIL,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
}


def safe_git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `env` (default: the server's; `launch.environment`: no
    secret, no GIT_* variable, no SSH_ASKPASS), plus the variables that keep git from
    reading system or global config, prompting or paging, and agentls's identity."""
    return {**launch.environment(source=env), **_ENV}


def safe_git_command(arguments: Sequence[str]) -> list[str]:
    """The argv for `git <arguments>` with every program-running setting overridden.

    Run it with `env=safe_git_env()` and stdin closed. `arguments` must start with a git
    builtin (an alias is a program the repository chooses).
    """
    overrides = [item for setting in _OVERRIDES for item in ("-c", setting)]
    return ["git", "--no-pager", *overrides, *arguments]


class GitError(Exception):
    """A git command agentls ran could not start, took too long or failed."""


def run(
    arguments: Sequence[str],
    cwd: Path,
    *,
    data: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float = 600.0,
    workspace: Path | None = None,
) -> bytes:
    """`git ARGUMENTS` in `cwd`, safely, with `env` over `safe_git_env()`; its stdout.
    `workspace` (default `cwd`) is the one it serves: git is never found on a PATH entry
    inside it. Raises GitError, with git's last words when it failed (and `check`)."""
    argv = safe_git_command(arguments)
    try:
        done = launch.run(
            launch.own(argv, cwd, {**safe_git_env(), **(env or {})}, workspace or cwd),
            input=data,
            stdin=None if data is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
    except OSError as error:
        raise GitError(f"git could not be run: {error}") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {_named(arguments)} took over {timeout} s") from None
    if check and done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {_named(arguments)} failed: {lines[-1] if lines else 'no message'}")
    return done.stdout


def _named(arguments: Sequence[str]) -> str:
    """The git command's name, past the options before it (`--git-dir=...`, `-c x=y`)."""
    words = iter(arguments)
    for word in words:
        if word == "-c":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return "(no command)"


async def start(arguments: Sequence[str], cwd: Path, **streams: int) -> asyncio.subprocess.Process:
    """`git ARGUMENTS` in `cwd`, safely, started (streams as asyncio takes them; stdin closed
    unless given)."""
    streams.setdefault("stdin", asyncio.subprocess.DEVNULL)
    return await launch.start(
        launch.reader(safe_git_command(arguments), cwd, safe_git_env()), **streams
    )
