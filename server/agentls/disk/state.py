"""Where agentls keeps what it remembers of a workspace between runs: private folders under
`$XDG_STATE_HOME/agentls/` (default `~/.local/state/agentls/`), one per workspace."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def workspace_key(root: Path) -> str:
    """A short name for the workspace, the same for every spelling of its path."""
    return hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]


def private_dir(path: Path) -> Path:
    """`path`, created with its missing parents readable by the user only (0700)."""
    for folder in reversed([path, *path.parents]):
        # Another process (a batch's next worker) may make the same folder at the same
        # moment: trying and accepting "exists" has no gap between a check and the mkdir.
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        # mkdir's mode is masked by the umask; chmod makes it exact.
        os.chmod(folder, 0o700)
    os.chmod(path, 0o700)
    return path


def state_base() -> Path:
    """`$XDG_STATE_HOME/agentls`: the checkpoints' git config there is run by agentls, so a
    sandboxed command must not write it even when it lies inside the workspace."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "agentls"


def state_dir(kind: str, root: Path) -> Path:
    """The private folder of `kind` ("checkpoints", "sessions") for the workspace `root`."""
    return private_dir(state_base() / kind / workspace_key(root))


def append_line(path: Path, line: str) -> None:
    """Append `line` and a newline to a private (0600) log, written whole in one call. A line
    left unfinished by a crash is ended first, so it costs only itself, not the next one."""
    handle = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        size = os.fstat(handle).st_size
        cut = size > 0 and os.pread(handle, 1, size - 1) != b"\n"
        os.write(handle, ("\n" if cut else "").encode() + line.encode("utf-8") + b"\n")
    finally:
        os.close(handle)
