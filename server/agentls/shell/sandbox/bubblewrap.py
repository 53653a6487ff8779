"""The Linux backend: bubblewrap (`bwrap`), namespaces without setuid or a daemon."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .base import Confinement

_PROBE_SECONDS = 10.0


class Bubblewrap:
    """The whole file system read-only, then writable binds on top; private /tmp and /run
    (so no socket of another program there is reachable), its own /dev and /proc, and new
    PID, IPC and (unless allowed) network namespaces.

    The new PID namespace is what makes a command's processes end with it: bwrap's init is
    PID 1 inside, and when the command exits, is killed, or the server dies
    (`--die-with-parent`), the kernel kills everything left in the namespace, `setsid`,
    `set -m` and double forks included. `/proc` shows no process outside it.
    """

    name = "bubblewrap"

    def __init__(self, executable: str = "bwrap") -> None:
        # Found once: the program probed is the one that runs every command.
        self.path = shutil.which(executable)

    def command(self, argv: Sequence[str], confinement: Confinement) -> list[str]:
        root = str(confinement.root)
        assert self.path is not None, "probe() first"
        options = [self.path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # The tmpfs mounts come first: the root may lie under /tmp, and a later bind inside
        # them would be hidden by them.
        options += ["--tmpfs", "/tmp", "--tmpfs", "/run", "--bind", root, root]
        for path in confinement.read_only:
            options += ["--ro-bind", str(path), str(path)]
        options += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", root]
        if not confinement.network:
            options.append("--unshare-net")
        elif Path("/etc/resolv.conf").resolve().is_relative_to("/run"):
            # systemd-resolved keeps the resolver's address under /run.
            target = str(Path("/etc/resolv.conf").resolve().parent)
            options += ["--ro-bind", target, target]
        return [*options, "--", *argv]

    def probe(self) -> str | None:
        if self.path is None:
            return "bubblewrap (bwrap) is not installed"
        # The strictest confinement: a namespace the kernel refuses shows here, not later.
        try:
            with tempfile.TemporaryDirectory(prefix="agentls-probe-") as folder:
                argv = self.command(["true"], Confinement(Path(folder).resolve(), False, ()))
                done = subprocess.run(
                    argv, capture_output=True, text=True, timeout=_PROBE_SECONDS, env={}
                )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bubblewrap does not start: {error}"
        if done.returncode != 0:
            detail = done.stderr.strip().splitlines()
            return f"bubblewrap fails here: {detail[-1] if detail else f'exit {done.returncode}'}"
        return None
