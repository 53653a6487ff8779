"""Landing an accepted change on disk, for the front ends that have no editor to apply it
(the terminal, an ACP client without `fs/write_text_file`)."""

from __future__ import annotations

from pathlib import Path

from ..interfaces import Change, Landed
from . import files


def land_on_disk(root: Path, change: Change) -> Landed:
    """Write the change atomically inside `root`, unless the file changed since it was
    proposed; a failure is the model's to read, never the task's end."""
    try:
        current = files.read_text(root, change.path)
    except FileNotFoundError:
        current = None
    except (OSError, files.NotText) as error:
        return Landed(False, rejected_reason=f"it cannot be read any more: {error}")
    if current != change.old_text:
        # Changed by someone else while the question waited: writing would lose that.
        return Landed(False, rejected_reason="the file changed on disk meanwhile; read it again")
    try:
        files.write_atomic(root, change.path, change.new_text)
    except (OSError, ValueError) as error:
        return Landed(False, rejected_reason=f"it could not be written: {error}")
    return Landed(True, change.new_text)
