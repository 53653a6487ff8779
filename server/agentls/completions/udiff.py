"""Unified diffs of line lists, as Zed writes them into a Zeta prompt's `### User Edits:`.

Zed's builder (crates/language `unified_diff_with_offsets`): three lines of context, hunks
closer than seven unchanged lines merged, each header `@@ -a,b +c,d @@` with both counts
always written, every line followed by a newline, and no file header.
"""

from __future__ import annotations

from ..edits import line_opcodes

CONTEXT = 3


class _Hunks:
    """Hunks built from the changes in order, as Zed's sink receives them."""

    def __init__(self, old: list[str], offset: int) -> None:
        self.old = old
        self.offset = offset
        self.pos = 0
        self.old_start = self.new_start = self.old_len = self.new_len = 0
        self.body: list[str] = []
        self.out: list[str] = []

    def _context(self, to: int) -> None:
        self.body.extend(f" {line}\n" for line in self.old[self.pos : to])
        self.old_len += to - self.pos
        self.new_len += to - self.pos

    def change(self, removed: range, added: list[str], new_at: int) -> None:
        if removed.start - self.pos > 2 * CONTEXT:
            self.flush()
        if not self.old_len and not self.new_len:
            self.pos = max(removed.start - CONTEXT, 0)
            self.old_start, self.new_start = self.pos, max(new_at - CONTEXT, 0)
        self._context(removed.start)
        self.pos = removed.stop
        self.old_len += len(removed)
        self.new_len += len(added)
        self.body.extend(f"-{self.old[i]}\n" for i in removed)
        self.body.extend(f"+{line}\n" for line in added)

    def flush(self) -> None:
        if not self.old_len and not self.new_len:
            return
        end = min(self.pos + CONTEXT, len(self.old))
        self._context(end)
        self.pos = end
        old_first, new_first = self.old_start + 1 + self.offset, self.new_start + 1 + self.offset
        self.out.append(f"@@ -{old_first},{self.old_len} +{new_first},{self.new_len} @@\n")
        self.out.extend(self.body)
        self.body.clear()
        self.old_len = self.new_len = 0


def unified_diff(old: list[str], new: list[str], offset: int = 0) -> str:
    """The diff from `old` to `new`, whose first line is line `offset` (0-based) of the file."""
    hunks = _Hunks(old, offset)
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag != "equal":
            hunks.change(range(i1, i2), new[j1:j2], j1)
    hunks.flush()
    return "".join(hunks.out)
