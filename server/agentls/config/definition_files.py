"""The subagent definitions' files, read as found (`*.md` texts, unparsed): a repository's
`.claude/agents/` (what it says about the agent that reads it, beside its settings) and the
user's folders. What a definition holds is `extensions/agent_definitions.py`'s to parse."""

from __future__ import annotations

import logging
from pathlib import Path

from ..disk import files

log = logging.getLogger(__name__)

PROJECT_FOLDER = Path(".claude") / "agents"
"""A workspace's definitions: the repository's files, used once the user approved each."""
MAX_DEFINITIONS = 50
"""Definitions read from one folder: the `agent` tool's description names each."""
MAX_FILE_BYTES = 256 * 1024
"""Bytes of a command's or a subagent definition's file read at most: each is kept whole,
and a repository may bring hundreds."""


def read_folder(folder: Path, follow: bool = True) -> dict[str, str]:
    """The `*.md` files of `folder` by path, with their text (none when it is missing)."""
    try:
        paths = sorted(folder.glob("*.md"))[:MAX_DEFINITIONS]
    except OSError:
        return {}
    found = {}
    for path in paths:
        try:
            found[str(path)] = files.read_bounded(folder, path, MAX_FILE_BYTES, follow=follow)
        except (OSError, files.NotText) as error:
            log.warning("the subagent definition %s is ignored: %s", path, error)
    return found


def project_texts(root: Path) -> dict[str, str]:
    """The workspace's definitions by path relative to the root, never through a symlink."""
    folder = root / PROJECT_FOLDER
    return {
        str(Path(path).relative_to(root)): text
        for path, text in read_folder(folder, follow=False).items()
        if Path(path).parent == folder
    }
