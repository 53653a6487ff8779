"""Small images made on the spot for the image tests (Pillow, no files shipped)."""

from __future__ import annotations

import io
import random
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
