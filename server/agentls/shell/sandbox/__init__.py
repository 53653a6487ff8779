"""Confining bash: what a sandbox must do, and finding the one this machine can run.

One backend per operating system, each a small class with the `Sandbox` interface:
bubblewrap on Linux (`bubblewrap.py`). A macOS backend would build a `sandbox-exec` (Seatbelt)
profile from the same `Confinement` and be listed in `_backends`; nothing else changes.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from ...config import environment
from ...disk.state import private_dir, state_base
from . import bubblewrap
from .base import Confinement, Sandbox

__all__ = [
    "Confinement",
    "Sandbox",
    "Unavailable",
    "blocked_note",
    "cache_variables",
    "confinement",
    "find",
    "for_projects",
    "probe_in_background",
    "refused_write",
]


@dataclass(frozen=True)
class Unavailable:
    reason: str


def _backends() -> list[Sandbox]:
    if sys.platform != "linux":
        return []
    return [bubblewrap.Bubblewrap(path) for path in bubblewrap.programs()] or [
        bubblewrap.Bubblewrap()
    ]


def find() -> Sandbox | Unavailable:
    """The first backend that works on this machine, probed once per process (a probe that
    `probe_in_background` began is waited for, not run twice)."""
    with _probing:
        return _find()


def probe_in_background() -> None:
    """Probe now, off the event loop, so the first task does not wait for it."""
    threading.Thread(target=find, name="probe-sandbox", daemon=True).start()


_probing = threading.Lock()


@functools.cache
def _find() -> Sandbox | Unavailable:
    reasons = []
    for backend in _backends():
        reason = backend.probe()
        if reason is None:
            return backend
        if reason not in reasons:  # the system's bwrap and the wheel's, refused alike
            reasons.append(reason)
    return Unavailable("; ".join(reasons) or f"no sandbox backend for {sys.platform} yet")


def confinement(root: Path, network: bool) -> Confinement:
    """Writable `root`, but not what would let a command run code later outside the sandbox:
    git's hooks and config (an editor, the user or agentls's own git runs them), and
    agentls's own settings and state (its checkpoints' git config).

    Each of those, and each folder between it and `root`, is a mount point in the sandbox,
    so none can be renamed, removed or replaced: `mv .git .git_old` fails (EBUSY) instead of
    taking the read-only binds along and leaving a writable copy at `.git`."""
    root = root.resolve()
    hooks = root / ".git" / "hooks"
    if hooks.parent.is_dir() and not hooks.exists():
        # As `git init` makes it: else a command could create it, and put a hook in it.
        # Another command starting at the same moment may make it first.
        hooks.mkdir(exist_ok=True)
    for own in (environment.config_dir(), state_base()):
        if own.resolve().is_relative_to(root) and not own.exists():
            # A command could make it, settings.json and all; agentls would read that.
            private_dir(own)
    protected = _inside(
        root, [hooks, root / ".git" / "config", environment.config_dir(), state_base()]
    )
    between = {
        p for path in protected for p in path.parents if p != root and p.is_relative_to(root)
    }
    mount_points = sorted(between - set(protected), key=lambda p: len(p.parts))
    return Confinement(root, network, tuple(protected), tuple(mount_points))


def for_projects(setting: str) -> Sandbox | None:
    """What confines a program the repository defines (a project's hook or MCP server), as
    bash is (`launch.in_workspace` applies it). Without a sandbox it does not run, unless the
    user turned the sandbox off (None: it runs as their bash commands do). Raises
    RuntimeError."""
    if setting == "off":
        return None
    found = find()
    if isinstance(found, Unavailable):
        raise RuntimeError(f"the project's programs run only in the sandbox, and {found.reason}")
    return found


def cache_variables(cache: Path) -> dict[str, str]:
    """The variables that send a confined program's caches to `cache`: where uv (`uvx`), npm
    (`npx`), pip and most others keep their downloads, which the read-only home cannot."""
    own = {"UV_CACHE_DIR": "uv", "npm_config_cache": "npm", "PIP_CACHE_DIR": "pip"}
    return {"XDG_CACHE_HOME": str(cache), **{k: str(cache / v) for k, v in own.items()}}


def _inside(root: Path, paths: list[Path]) -> list[Path]:
    resolved = dict.fromkeys(path.resolve() for path in paths)
    return [path for path in resolved if path.is_relative_to(root) and path.exists()]


_READ_ONLY = re.compile(
    # A file bound read-only is a mount point: replacing it (git's config.lock) gives EBUSY.
    r"read-only file system|device or resource busy",
    re.IGNORECASE,
)
_OFFLINE = re.compile(
    r"temporary failure in name resolution|could not resolve|name or service not known"
    r"|getaddrinfo|eai_again|network is unreachable|no address associated with hostname"
    r"|connection refused",
    re.IGNORECASE,
)


def refused_write(output: str) -> bool:
    """Whether a confined program's output shows the sandbox refused it a write."""
    return _READ_ONLY.search(output) is not None


def blocked_note(output: str, network: bool, planted: list[str] | None = None) -> str | None:
    """One line for the model when a command's output shows the sandbox stopped it, so that
    it asks the user instead of trying other ways around; or when the command left a git
    setting that runs a program (`planted`, disarmed by `git_audit`)."""
    if planted:
        return (
            "[sandbox] The command left git settings that would run a program outside the "
            f"sandbox; agentls disarmed them: {'; '.join(planted)}. Tell the user; do not "
            "retry or work around it."
        )
    if refused_write(output):
        return (
            "[sandbox] The sandbox refused a write: only the workspace is writable (and not "
            ".git/hooks, .git/config, nor agentls's own config and state). Do not retry or "
            "work around it; ask the user."
        )
    if not network and _OFFLINE.search(output):
        return (
            "[sandbox] The sandbox has no network (setting sandboxNetwork), not even the "
            "host's localhost. Do not retry or work around it; ask the user."
        )
    return None
