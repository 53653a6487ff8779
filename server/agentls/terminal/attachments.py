"""The images a terminal task carries: those given with `-i FILE` and each `@path` of an
image file in the line typed (`look at @shots/broken.png`), read relative to the
workspace. The line stays as typed: the model sees the name, and the image after it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path

from .. import images

_MENTION = re.compile(r"(?<!\S)@(\S+)")


def mentioned(line: str, root: Path) -> list[Path]:
    """The image files a line names with `@`, in order, each once; a name that is no image
    file (`@decorator`, a missing file) is left as words."""
    found: list[Path] = []
    for match in _MENTION.finditer(line):
        name = match.group(1).rstrip(".,;:!?)'\"")
        path = (root / name).expanduser()
        if images.is_image_name(name) and path.is_file() and path not in found:
            found.append(path)
    return found


async def task_images(line: str, given: Sequence[Path], root: Path) -> list[images.Image]:
    """The images of a task: `given` (`-i`), then those the line mentions; read and checked
    off the event loop (a bad one becomes a placeholder, the task still runs)."""
    paths = [*given, *(p for p in mentioned(line, root) if p not in given)]
    return [await asyncio.to_thread(images.from_file, path, _shown(path, root)) for path in paths]


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
