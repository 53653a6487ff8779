"""The first checkpoint of a git workspace starts from what git already knows.

The repository's own index holds each tracked file's blob id and the stat data git saw when
it last hashed it; a shadow index seeded with those entries lets git hash only the files
that changed since (and the untracked ones), instead of every file of a big repository. The
blobs stay in the repository's object store, which the shadow reads as an alternate.

The repository is untrusted, so nothing of it runs or configures anything: its index is
read as a file (a real `.git` folder, no symlink followed) and parsed by git under the
shadow's own config (`GIT_INDEX_FILE`); only plain entries are kept (stage 0, a file or a
symlink, not assume-unchanged, skip-worktree or intent-to-add), and the shadow index is
written anew from them, without the index's extensions (a cache tree claims tree ids for
whole folders: a forged one would make undo "restore" files nobody changed). An entry whose
stat data does not match the file is hashed again, as git always does; stat data cannot be
forged ahead, since a file's ctime and inode are the kernel's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)

MAX_INDEX_BYTES = 1 << 30
_MODES = {"100644": 0o100644, "100755": 0o100755, "120000": 0o120000}
_UNTRUSTED_FLAGS = 0x8000 | 1 << 29 | 1 << 30
"""git's in-memory flags: assume-unchanged (stat never checked), intent-to-add, skip-worktree."""


class _Entry(NamedTuple):
    path: bytes
    mode: int
    blob: bytes
    stat: tuple[int, ...]
    """ctime s, ns, mtime s, ns, dev, ino, (mode), uid, gid, size: the index's order."""


Git = Callable[..., bytes]


def seed_index(root: Path, git_dir: Path, git: Git) -> bool:
    """Write the shadow's first index from the workspace's own git index, when there is one
    that can be read safely. Whether it was; a failure only costs the speed-up."""
    user = root / ".git"
    try:
        if not stat.S_ISDIR(os.lstat(user).st_mode) or not stat.S_ISDIR(
            os.lstat(user / "objects").st_mode
        ):
            return False
        data = _read_regular(user / "index")
    except OSError:
        return False
    if data is None or data[:4] != b"DIRC":
        return False
    copy = git_dir / "agentls-user-index"
    try:
        copy.write_bytes(data)
        index = {"GIT_INDEX_FILE": str(copy)}
        listed = git("ls-files", "--stage", "--debug", "-z", work_tree=False, env=index)
        entries = list(_parse(listed))
    except Exception as error:  # any failure (CheckpointError, a parse): start from nothing
        log.info("the workspace's git index is not used: %s", error)
        return False
    finally:
        copy.unlink(missing_ok=True)
    if not entries or [e.path for e in entries] != sorted(e.path for e in entries):
        return False
    (git_dir / "index").write_bytes(_index(entries))
    alternates = git_dir / "objects" / "info"
    alternates.mkdir(parents=True, exist_ok=True)
    (alternates / "alternates").write_text(f"{user / 'objects'}\n")
    return True


def _read_regular(path: Path) -> bytes | None:
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_INDEX_BYTES:
            return None
        return file.read()


def _parse(listed: bytes) -> Iterator[_Entry]:
    """`ls-files --stage --debug -z`: "<mode> <id> <stage>\\t<path>" NUL, then five lines
    ("  ctime: s:ns", "  mtime: s:ns", "  dev: d\\tino: i", "  uid: u\\tgid: g",
    "  size: n\\tflags: hex")."""
    position = 0
    while position < len(listed):
        end = listed.index(b"\0", position)
        header, _, path = listed[position:end].partition(b"\t")
        position, lines = end + 1, []
        for _ in range(5):
            end = listed.index(b"\n", position)
            lines.append(listed[position:end])
            position = end + 1
        mode, blob, stage = header.decode().split()
        values = [part.split(b":", 1)[1].strip() for line in lines for part in line.split(b"\t")]
        ctime, mtime = values[0].split(b":"), values[1].split(b":")
        dev, ino, uid, gid, size = (int(v) for v in values[2:7])
        flags = int(values[7], 16)
        if stage != "0" or mode not in _MODES or flags & _UNTRUSTED_FLAGS or len(blob) != 40:
            continue
        if not _plain(path):
            continue
        numbers = (int(ctime[0]), int(ctime[1]), int(mtime[0]), int(mtime[1]), dev, ino)
        yield _Entry(path, _MODES[mode], bytes.fromhex(blob), (*numbers, uid, gid, size))


def _plain(path: bytes) -> bool:
    """A path git itself would accept in a tree: no empty, `.`, `..` or `.git` part."""
    parts = path.split(b"/")
    return all(p and p not in (b".", b"..") and p.lower() != b".git" for p in parts)


def _index(entries: list[_Entry]) -> bytes:
    """An index file, version 2: header, entries (stat data, mode, id, flags, path, padded
    to 8 bytes), and the SHA-1 of all of it."""
    out = [b"DIRC", struct.pack(">II", 2, len(entries))]
    for entry in entries:
        ctime_s, ctime_ns, mtime_s, mtime_ns, dev, ino, uid, gid, size = entry.stat
        fixed = struct.pack(
            ">10I20sH",
            ctime_s & 0xFFFFFFFF,
            ctime_ns,
            mtime_s & 0xFFFFFFFF,
            mtime_ns,
            dev & 0xFFFFFFFF,
            ino & 0xFFFFFFFF,
            entry.mode,
            uid & 0xFFFFFFFF,
            gid & 0xFFFFFFFF,
            size & 0xFFFFFFFF,
            entry.blob,
            min(len(entry.path), 0xFFF),
        )
        padding = 8 - (len(fixed) + len(entry.path)) % 8
        out += [fixed, entry.path, b"\0" * padding]
    body = b"".join(out)
    return body + hashlib.sha1(body).digest()
