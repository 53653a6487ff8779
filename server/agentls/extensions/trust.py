"""The user's approval of what a repository asks to run: a project's MCP servers (`.mcp.json`)
and hooks (`.agentls/settings.json`). Remembered per project and per exact definition in
agentls's private state folder (never in the repository): a changed definition is a new one,
and asks again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..disk import files
from ..disk.state import state_dir

_FILE = "approved.json"


def fingerprint(kind: str, name: str, definition: Any) -> str:
    canonical = json.dumps([kind, name, definition], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class Trust:
    """What the user approved of the project at `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def folder(self) -> Path:
        """Made when first used: a project that asks for nothing leaves no trace."""
        return state_dir("trust", self.root)

    def _approved(self) -> set[str]:
        folder = self.folder
        try:
            loaded = json.loads(files.read_text(folder, folder / _FILE))
        except (OSError, ValueError):
            return set()
        return (
            {entry for entry in loaded if isinstance(entry, str)}
            if isinstance(loaded, list)
            else set()
        )

    def approved(self, kind: str, name: str, definition: Any) -> bool:
        return fingerprint(kind, name, definition) in self._approved()

    def approve(self, kind: str, name: str, definition: Any) -> None:
        entries = self._approved() | {fingerprint(kind, name, definition)}
        folder = self.folder
        files.write_atomic(folder, folder / _FILE, json.dumps(sorted(entries)))
