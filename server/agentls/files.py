"""Reading and writing files on disk without surprises."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

MAX_TEXT_BYTES = 50 * 1024 * 1024
_SNIFF = 8192


class NotText(ValueError):
    """The file is binary or too large to be read as text; the message says which."""


def read_text(path: Path) -> str:
    """A text file's content, newlines kept as they are on disk."""
    status = path.stat()
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(str(path))
    if not stat.S_ISREG(status.st_mode):
        # A FIFO or a device would block the server on read.
        raise NotText(f"{path.name} is not a regular file")
    size = status.st_size
    if size > MAX_TEXT_BYTES:
        raise NotText(f"{path.name} is {size} bytes, too large to read as text")
    data = path.read_bytes()
    if b"\0" in data[:_SNIFF]:
        raise NotText(f"{path.name} is a binary file ({size} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotText(
            f"{path.name} is not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def write_atomic(path: Path, text: str | bytes) -> None:
    """Replace `path` with `text` (bytes are written as they are) all at once: a crash leaves
    the old file or the new, never half.

    The file keeps its permissions (a new one gets the umask's); missing folders are created.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.stat().st_mode & 0o7777 if path.exists() else None
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # os.open applies the umask to a new file's mode, without reading or changing it.
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if existing is not None:
            os.chmod(temporary, existing)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
