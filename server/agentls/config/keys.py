"""The user's config `.env` changed by agentls itself: a provider's key written by a sign-in
(`agentls acp --login`) and removed by a sign-out (ACP `logout`).

Only whole lines that assign the named variables are touched; every other line (comments,
other services' keys, blank lines) stays as the user wrote it. The file is replaced at once
(written beside it, then renamed), created 0600 in a 0700 folder, and a link in its place is
replaced, never followed: the key never lands where the link points.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..disk.state import private_dir
from .environment import config_dir

MAX_BYTES = 1_000_000
"""A larger file is not a `.env` anyone wrote by hand: it is left alone."""

_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def dot_env() -> Path:
    return config_dir() / ".env"


def _assigns(line: str, names: frozenset[str]) -> bool:
    """Whether `line` sets one of `names` (`NAME=...` or `export NAME=...`)."""
    head = line.strip()
    head = head.removeprefix("export").lstrip() if head.startswith("export ") else head
    return head.split("=", 1)[0].strip() in names if "=" in head else False


def _lines() -> list[str]:
    """The file's lines; none when there is no file. Raises OSError for a link, a
    non-regular file or an oversized one: agentls does not rewrite what it did not expect."""
    path = dot_env()
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return []
    except OSError as error:
        if path.is_symlink():
            raise OSError(f"{path} is a link: change it by hand") from None
        raise error
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(f"{path} is not a regular file")
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise OSError(f"{path} is over {MAX_BYTES} bytes: change it by hand")
    return data.decode("utf-8", errors="replace").splitlines()


def _write(lines: list[str]) -> None:
    path = dot_env()
    folder = private_dir(path.parent)
    temporary = folder / f".env.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    with os.fdopen(os.open(temporary, flags, 0o600), "w", encoding="utf-8") as stream:
        stream.write("".join(f"{line}\n" for line in lines))
    os.replace(temporary, path)


def set_key(name: str, value: str) -> Path:
    """`name=value` in the user's config `.env`, replacing that variable's lines; the path."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a variable name: {name!r}")
    if not value or any(ch in value for ch in "\r\n\0"):
        raise ValueError("a key is one line of text")
    kept = [line for line in _lines() if not _assigns(line, frozenset({name}))]
    quoted = value.replace("\\", "\\\\").replace("'", "\\'")
    _write([*kept, f"{name}='{quoted}'"])
    return dot_env()


def remove_keys(names: tuple[str, ...]) -> bool:
    """Remove the lines that set `names` from the user's config `.env`; whether any was."""
    lines = _lines()
    kept = [line for line in lines if not _assigns(line, frozenset(names))]
    if len(kept) == len(lines):
        return False
    _write(kept)
    return True
