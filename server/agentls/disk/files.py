"""Reading and writing files on disk without surprises.

Every path is checked against the workspace root when the model names it, but the disk can
change before it is read or written (a review can take minutes): a folder on the way may
become a symlink out of the root, a file a FIFO. So both walk from the root one name at a
time through folder descriptors that never follow a symlink, and look at what they opened
before using it.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .paths import refuse_git_metadata, relative

MAX_TEXT_BYTES = 50 * 1024 * 1024
TEMPORARY_NAME = ".{name}.agentls-{token}.tmp"
TEMPORARY_GLOB = ".*.agentls-*.tmp"
"""A file being written, renamed over the real one once whole. Checkpoints never record
one: a whole-tree record taken in the background while an edit lands would otherwise see it,
and undo would bring it back."""
_SNIFF = 8192
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NotText(ValueError):
    """The file is binary or too large to be read as text; the message says which."""


class PathChanged(OSError):
    """A folder on the way is now a symlink or no folder: the path no longer leads where it
    was checked, so nothing is read or written there.

    `reason` says which name is in the way and what it is (`a is a link to b`), relative to
    the root, for a caller that words its own message (undo).
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


@contextlib.contextmanager
def _folder_of(root: Path, path: Path, create: bool = False) -> Iterator[tuple[int, str]]:
    """A descriptor of the folder holding `path` (under `root`), and the file's name in it.

    Reached from `root` one name at a time without following symlinks; missing folders are
    made when `create` is set.
    """
    parts = path.relative_to(root).parts
    if not parts:
        raise IsADirectoryError(str(path))
    if ".." in parts:
        raise PathChanged(f"{path} is not a file under {root}")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, part in enumerate(parts[:-1], start=1):
            if create:
                # mkdir never follows a link: one standing there is met by the open below.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=folder)
            try:
                inner = os.open(part, _FOLDER, dir_fd=folder)
            except FileNotFoundError:
                raise
            except OSError as error:  # a symlink (ELOOP) or a file (ENOTDIR)
                where = "/".join(parts[:depth])
                reason = _in_the_way(folder, part, where, error)
                raise PathChanged(
                    f"{path} cannot be used: {part} is no longer a folder inside the root "
                    f"({reason})",
                    reason,
                ) from None
            os.close(folder)
            folder = inner
        yield folder, parts[-1]
    finally:
        os.close(folder)


def _in_the_way(folder: int, name: str, where: str, error: OSError) -> str:
    """What `name` in `folder` (`where` under the root) is, that a walk could not enter it.
    Said after the refusal, for the user only: the walk decided without it."""
    link = _link_target(folder, name)
    if link is not None:
        return f"{where} is a link to {link}"
    if error.errno == errno.ENOTDIR:
        return f"{where} is not a folder"
    return f"{where} cannot be opened ({error.strerror})"


def _link_target(folder: int, name: str) -> str | None:
    """Where the link `name` in `folder` points, shown safely (`shown_link`); None when it
    is no link."""
    try:
        target = os.readlink(name, dir_fd=folder)
    except OSError:
        return None
    return shown_link(target)


def shown_link(target: str) -> str:
    """A link's target as a message may show it: anyone's text, so no line break or escape
    reaches the user, and at most 200 characters."""
    shown = target if target.isprintable() else repr(target)
    return shown if len(shown) <= 200 else shown[:200] + "..."


def refuse_links(root: Path, path: Path) -> None:
    """Raise PathChanged when `path` (under `root`), or a folder on the way to it, is a link
    or a folder on the way is no folder: for a change that someone else makes by name (the
    editor), and so would follow a link. A path that is missing from some folder on is
    fine: nothing beyond can be a link."""
    try:
        with _folder_of(root, path) as (folder, name):
            link = _link_target(folder, name)
    except FileNotFoundError:
        return
    if link is not None:
        where = relative(root, path)
        reason = f"{where} is a link to {link}"
        raise PathChanged(f"{path} cannot be used: {reason}", reason)


def read_text(root: Path, path: Path, follow: bool = False) -> str:
    """A text file's content (under `root`), newlines kept as they are on disk.

    `follow`: the file itself may be a symlink (not the folders on the way), for a file that
    is no workspace file the model named, such as a `.env`.
    """
    with _opened(root, path, follow) as (stream, size):
        if size > MAX_TEXT_BYTES:
            raise NotText(f"{path.name} is {size} bytes, too large to read as text")
        data = stream.read(MAX_TEXT_BYTES + 1)
    return _decoded(data, path, size, final=True)


def read_head(root: Path, path: Path, limit: int, follow: bool = False) -> tuple[str, int]:
    """The first `limit` bytes of a text file (a character the limit cuts is left out) and
    the file's size: for a file of which only the start is wanted, however large it is."""
    with _opened(root, path, follow) as (stream, size):
        data = stream.read(limit)
    return _decoded(data, path, size, final=False), size


def read_bounded(root: Path, path: Path, limit: int, follow: bool = False) -> str:
    """The text of `path` (read_text's rules), NotText when it is larger than `limit`: no
    more than that is read, whatever the file's size."""
    text, size = read_head(root, path, limit, follow=follow)
    if size > limit:
        raise NotText(f"{path.name} is {size:,} bytes, more than the {limit:,} read")
    return text


def read_bytes(root: Path, path: Path, limit: int) -> bytes:
    """A regular file's bytes (under `root`, reached as read_text reaches it: no symlink on
    the way, no FIFO); NotText when it is larger than `limit`."""
    with _opened(root, path, False) as (stream, size):
        if size > limit:
            raise NotText(f"{path.name} is {size:,} bytes, more than the {limit:,} read")
        return stream.read(limit + 1)


@contextlib.contextmanager
def _opened(root: Path, path: Path, follow: bool) -> Iterator[tuple[BinaryIO, int]]:
    with _folder_of(root, path) as (folder, name):
        descriptor = _open_regular(folder, name, path, follow)
    with os.fdopen(descriptor, "rb") as stream:
        yield stream, os.fstat(descriptor).st_size


def _decoded(data: bytes, path: Path, size: int, final: bool) -> str:
    """`data` as UTF-8; unless `final`, an incomplete character at its end is left out."""
    if b"\0" in data[:_SNIFF]:
        raise NotText(f"{path.name} is a binary file ({size} bytes)")
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=final)
    except UnicodeDecodeError as error:
        raise NotText(
            f"{path.name} is not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def _open_regular(folder: int, name: str, path: Path, follow: bool) -> int:
    """`name` in `folder` opened for reading, if it is a regular file.

    A FIFO or a device would block the server on read; a symlink here was not there when
    the path was checked. The open does not block and follows no symlink, and what it
    opened is looked at again, so a swap after the first look changes nothing.
    """
    status = os.stat(name, dir_fd=folder, follow_symlinks=follow)
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(str(path))
    not_regular = NotText(f"{path.name} is not a regular file")
    if not stat.S_ISREG(status.st_mode):
        raise not_regular
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        descriptor = os.open(name, flags, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError:
        raise not_regular from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise not_regular
    return descriptor


def write_atomic(
    root: Path,
    path: Path,
    text: str | bytes,
    executable: bool = False,
    replace_link: bool = False,
) -> None:
    """Replace `path` (under `root`) with `text` (bytes are written as they are) all at once:
    a crash leaves the old file or the new, never half.

    The file keeps its permissions (a new one gets the umask's, with `executable` the
    execute bits where it can be read); missing folders are created.
    The temporary file is written and renamed inside the folder's descriptor, so a folder
    swapped for a symlink meanwhile cannot send the write out of the root.
    `replace_link`: a symlink standing at `path` is replaced itself (the rename never follows
    it), for undo putting back the file a link took the place of; else it is refused.
    """
    refuse_git_metadata(root, path)
    with _folder_of(root, path, create=True) as (folder, name):
        try:
            existing = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            mode = None
        else:
            if replace_link and stat.S_ISLNK(existing.st_mode):
                mode = None  # a link's own mode says nothing of the file's
            elif not stat.S_ISREG(existing.st_mode):
                raise PathChanged(f"{path} is no longer a regular file; nothing was written")
            else:
                mode = existing.st_mode & 0o7777
        temporary = TEMPORARY_NAME.format(name=name, token=secrets.token_hex(6))
        # os.open applies the umask to a new file's mode, without reading or changing it.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        handle = os.open(temporary, flags, 0o666, dir_fd=folder)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(text.encode("utf-8") if isinstance(text, str) else text)
                stream.flush()
                if mode is None and executable:
                    mode = os.fstat(stream.fileno()).st_mode & 0o7777
                if mode is not None:
                    os.fchmod(stream.fileno(), mode | ((mode & 0o444) >> 2 if executable else 0))
                os.fsync(stream.fileno())
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=folder)
            raise


def remove(root: Path, path: Path) -> None:
    """Delete the file `path` (under `root`), if it is there, through its folder's
    descriptor: a folder swapped for a symlink cannot send the deletion out of the root."""
    refuse_git_metadata(root, path)
    try:
        with _folder_of(root, path) as (folder, name):
            if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                raise IsADirectoryError(str(path))
            os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        pass
