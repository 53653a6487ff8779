"""The secret a TCP connection shows to prove it is the user's editor.

Any process of the user can connect to `agentls --tcp`, a sandboxed command with
`sandboxNetwork` included (it shares the host's loopback). So the server makes a token at
start and writes it, readable by the user only, under `$XDG_RUNTIME_DIR` (else `/tmp`):
both are private, empty folders inside the sandbox, whose `/proc` shows no process outside
it either. The editor reads the file and sends the token as the setting `agentls.token`
(in `initializationOptions`, or answering `workspace/configuration`).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
from pathlib import Path
from typing import Any


def folder() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute():
        return Path(runtime) / "agentls"
    return Path("/tmp") / f"agentls-{os.getuid()}"


def _private_folder() -> Path:
    """The token's folder, made 0700 or refused when someone else could have made it (it may
    lie in /tmp, where any user can make a folder first)."""
    path = folder()
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    status = path.lstat()
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
        raise OSError(f"{path} is not a folder of this user's; remove it")
    os.chmod(path, 0o700)
    return path


def write(port: int) -> tuple[str, Path]:
    """A new token for the server on `port`, and the file (0600) that holds it."""
    token = secrets.token_urlsafe(32)
    path = _private_folder() / f"tcp-{port}.token"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a server's left on the same port before
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(handle, "w") as stream:
        stream.write(token + "\n")
    return token, path


def shown(token: str, sent: Any) -> bool:
    """Whether `sent` (the client's `agentls.token`) is the token, compared in constant time."""
    return isinstance(sent, str) and hmac.compare_digest(sent.strip().encode(), token.encode())
