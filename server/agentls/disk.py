"""Landing an accepted change on disk, for the front ends that have no editor to apply it
(the terminal, an ACP client without `fs/write_text_file`)."""

from __future__ import annotations

from . import files
from .interfaces import Change, Landed


def land_on_disk(change: Change) -> Landed:
    """Write the change atomically, unless the file changed since it was proposed."""
    try:
        current = files.read_text(change.path)
    except FileNotFoundError:
        current = None
    if current != change.old_text:
        # Changed by someone else while the question waited: writing would lose that.
        return Landed(False, rejected_reason="the file changed on disk meanwhile; read it again")
    files.write_atomic(change.path, change.new_text)
    return Landed(True, change.new_text)
