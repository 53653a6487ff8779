"""What a sandbox backend is given and must do."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Confinement:
    """What a confined command may do: write under `root` only (except `read_only`), reach
    the network only if `network`. `mount_points` are folders under `root`, writable, that
    must not be renamed or removed: those on the way from `root` to a `read_only` path."""

    root: Path
    network: bool
    read_only: tuple[Path, ...]
    mount_points: tuple[Path, ...] = ()
    cache: Path | None = None
    """A folder outside `root`, writable too: a project's program's own cache (uv, npm)."""


class Sandbox(Protocol):
    name: str

    def command(self, argv: Sequence[str], confinement: Confinement) -> list[str]:
        """`argv`, wrapped so that it runs confined. The wrapper runs in the caller's process
        group; killing that group, or the caller's death, ends everything inside."""
        ...

    def probe(self) -> str | None:
        """Why this backend cannot confine a command here, or None when it can."""
        ...
