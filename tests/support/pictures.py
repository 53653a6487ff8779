"""Small images made on the spot for the image tests (Pillow, no files shipped)."""

from __future__ import annotations

import io
import random
import struct
import zlib
from pathlib import Path

from PIL import Image


def png(width: int = 40, height: int = 30, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "PNG")
    return buffer.getvalue()


def noisy_png(width: int, height: int) -> bytes:
    """A picture that compresses badly, so its size, not only its edge, needs scaling."""
    picture = Image.frombytes("RGB", (width, height), random.randbytes(width * height * 3))
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def write_png(path: Path, width: int = 40, height: int = 30) -> Path:
    path.write_bytes(png(width, height))
    return path


def huge_png(width: int, height: int) -> bytes:
    """A real, valid PNG of `width` x `height` black pixels, one bit each, in a few kB: what
    a repository can hold that claims hundreds of millions of pixels (made without ever
    holding them: the rows are compressed one at a time)."""
    row = bytes(1 + (width + 7) // 8)  # a filter byte, then the bits
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", idat)
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
