"""The one door out: every program agentls starts outside its own process is prepared here.

A program runs in one of three places, each with its own rules:

- `in_workspace`: the model's commands and the repository's own programs (a project's hooks
  and MCP servers): confined by the sandbox it is given, which it applies itself, the
  workspace as cwd inside the confinement; unconfined only where the user turned the
  sandbox off (or allowed a command outside it).
- `on_host`: the user's own programs (their hooks and MCP servers): the cwd is a private
  empty folder made for the launch, never the workspace, so `python -m x`, `npx x` (which
  looks in the cwd's `node_modules/.bin`) and a relative path never resolve into the
  repository; the project's path is in `AGENTLS_PROJECT_DIR` and `CLAUDE_PROJECT_DIR`.
- `reader`: agentls's own programs that read the workspace as data (git with every
  repository-configured program off, `disk/safe_git.py`; rg without a config): the
  workspace is their cwd, since the paths they are given are relative to it; they run
  nothing the workspace names. `own`: the others (bubblewrap's probe, the guardian).

Everywhere: the program is found by an absolute path, in the absolute entries of PATH
outside the workspace only (a relative entry such as `.` or `node_modules/.bin` is resolved
against the cwd, and so would be the repository's, as would an activated `.venv/bin`); the
environment is an allow-list (`environment`), never the server's whole environment minus
guessed names; and on the host Python is started isolated (`PYTHONSAFEPATH=1`: `-m` and
`-c` never import from the cwd, for a cwd not made by us).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sandbox.base import Sandbox

_ALLOWED = frozenset(
    ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "SHELL", "TZ", "TMPDIR")
)
_ALLOWED_PREFIXES = ("LC_", "XDG_")
"""What every program gets of the server's environment, unless the user names more
(`passEnvironment`): where home is, who the user is, the locale, the terminal, the time zone,
the temporary and XDG folders. Nothing else: a key has many names (`BW_SESSION`,
`GOOGLE_CREDENTIALS`, `AWS_BEARER_TOKEN_BEDROCK`), and an allow-list need not guess them."""

PROJECT_VARIABLES = ("AGENTLS_PROJECT_DIR", "CLAUDE_PROJECT_DIR")
"""Where a program started outside the workspace finds it (Claude Code's name too)."""


def absolute_path_entries(path: str, workspace: Path | None = None) -> str:
    """PATH without its relative entries (an empty one means the cwd, too), nor those inside
    `workspace` (a repository's `.venv/bin` or `node_modules/.bin` put on PATH by a shell
    that activated it, links followed)."""
    entries = [entry for entry in path.split(os.pathsep) if os.path.isabs(entry)]
    if workspace is not None:
        inside = workspace.resolve()
        entries = [entry for entry in entries if not _within(Path(entry), inside)]
    return os.pathsep.join(entries)


def _within(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder)
    except (OSError, RuntimeError):  # a link loop: not a folder to run programs from
        return True


def environment(
    passed: Iterable[str] = (), source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allow-listed variables of `source` (default: the server's environment), plus the
    ones the user's settings name (`passed`); PATH with absolute entries only."""
    names = frozenset(passed)
    source = os.environ if source is None else source
    env = {
        name: value
        for name, value in source.items()
        if name in _ALLOWED or name.startswith(_ALLOWED_PREFIXES) or name in names
    }
    if "PATH" in env:
        env["PATH"] = absolute_path_entries(env["PATH"])
    return env


def program_path(name: str, path: str | None = None, workspace: Path | None = None) -> str:
    """`name` as an absolute path: looked up in the absolute entries of `path` (default the
    server's PATH) outside `workspace` when it is a bare name. Raises FileNotFoundError."""
    if os.sep in name:
        if not os.path.isabs(name):
            # Relative to which folder? Never guess: the cwd might be the workspace.
            raise FileNotFoundError(f"{name}: a program is named by an absolute path or a name")
        return name
    entries = absolute_path_entries(path or os.environ.get("PATH", ""), workspace)
    found = shutil.which(name, path=entries)
    if found is None:
        raise FileNotFoundError(f"{name}: not found on PATH")
    return os.path.abspath(found)


@dataclass(frozen=True)
class Launch:
    """A program ready to start: what to run, where, with which environment."""

    argv: tuple[str, ...]
    cwd: Path
    env: dict[str, str]


def own(
    argv: Sequence[str], folder: Path, env: Mapping[str, str], workspace: Path | None
) -> Launch:
    """One of agentls's own programs in `folder` (an empty one of its own): bubblewrap's
    probe, the guardian, git parsing a config. `workspace` is the one it serves, if any: a
    program named by a bare name is never found inside it; with none, a program must be
    named by its absolute path."""
    if workspace is None and not os.path.isabs(argv[0] if argv else ""):
        raise FileNotFoundError(f"{argv[:1]}: outside a workspace, a program is named whole")
    return Launch(_resolved(argv, env, workspace), folder, dict(env))


def reader(argv: Sequence[str], root: Path, env: Mapping[str, str]) -> Launch:
    """One of agentls's own programs reading the workspace `root` as data (git with the
    repository's programs off, rg without a config): at `root`, since the paths it is given
    are relative to it."""
    return Launch(_resolved(argv, env, root), root, dict(env))


def in_workspace(
    argv: Sequence[str],
    root: Path,
    env: Mapping[str, str],
    box: Sandbox | None,
    network: bool = False,
    cache: Path | None = None,
) -> Launch:
    """The model's command or the repository's program at `root`, confined here by `box`
    (writing under `root` only, and `cache` where given; the network only if `network`).
    `box` is None only where the user turned the sandbox off or allowed this command to run
    outside it: the caller must say which, it cannot forget."""
    if box is not None:
        # Imported here: the sandbox's own probe starts through this module.
        from .sandbox import confinement

        argv = box.command(argv, replace(confinement(root, network), cache=cache))
    return Launch(_resolved(argv, env, root), root, dict(env))


def on_host(
    argv: Sequence[str],
    folder: Path,
    root: Path,
    env: Mapping[str, str],
    own: Mapping[str, str] | None = None,
) -> Launch:
    """One of the user's programs, outside the sandbox, in `folder` (from `private_folder`):
    `env` and the program's `own` variables (its definition's), the project's path, and
    Python isolated."""
    project = dict.fromkeys(PROJECT_VARIABLES, str(root))
    full = {**env, **(own or {}), **project, "PYTHONSAFEPATH": "1"}
    return Launch(_resolved(argv, full, root), folder, full)


def _resolved(
    argv: Sequence[str], env: Mapping[str, str], workspace: Path | None
) -> tuple[str, ...]:
    if not argv:
        raise FileNotFoundError("no program to run")
    return (program_path(argv[0], env.get("PATH", ""), workspace), *argv[1:])


@contextlib.contextmanager
def private_folder() -> Iterator[Path]:
    """An empty folder of the user's only (0700), made for one launch and removed after it:
    what one program leaves there is never another's cwd."""
    folder = Path(tempfile.mkdtemp(prefix="agentls-cwd-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def start(launch: Launch, **streams: Any) -> asyncio.subprocess.Process:
    """Start `launch` in a process group of its own (so it and what it starts can be killed
    together); `streams` are stdin, stdout and stderr as asyncio takes them."""
    return await asyncio.create_subprocess_exec(
        *launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True, **streams
    )


def run(launch: Launch, **options: Any) -> subprocess.CompletedProcess[bytes]:
    """Run `launch` to its end (options as `subprocess.run` takes them, not cwd or env)."""
    return subprocess.run(
        launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True, **options
    )


Popen = subprocess.Popen
"""What `popen` returns (for annotations: only this module starts programs)."""


def popen(launch: Launch, **options: Any) -> Popen[Any]:
    """Start `launch` and leave it running (options as `subprocess.Popen` takes them)."""
    return subprocess.Popen(
        launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True, **options
    )


def kill_group(
    leader: int | Popen[Any] | asyncio.subprocess.Process, signum: int = signal.SIGKILL
) -> None:
    """Signal (default: kill) the process group that `leader` leads, so what it started goes
    with it: every program started here leads a group of its own. `leader` is what `start`
    or `popen` returned, or the pid of such a process (a worker names its own, a background
    task's status records it). A group already gone, or no longer ours, is left alone."""
    pid = leader if isinstance(leader, int) else leader.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
