"""A one-line edit_file in a file of many lines: the server's hunks and LSP positions, side
by side with difflib over the whole file, in this process and the same run."""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass

from agentls.edits import apply_hunks
from agentls.lsp.positions import text_edits
from agentls.tools.file_tools import planned_edit
from pygls.workspace.position_codec import PositionCodec


@dataclass(frozen=True)
class HunkCost:
    lines: int
    agentls_seconds: float
    """edit_file's hunks, the new text and the TextEdits in UTF-16 (min of runs)."""
    difflib_seconds: float
    """difflib's opcodes over the whole file's lines (min of runs)."""


def source_lines(count: int) -> list[str]:
    """Python-like code: short functions, blank lines and lines that repeat, as difflib meets
    in real files; every `result =` line is unique."""
    lines: list[str] = []
    k = 0
    while len(lines) < count:
        lines += [
            f"def function_{k}(value):\n",
            '    """Return the value scaled."""\n',
            "    if value is None:\n",
            "        return None\n",
            f"    result = value * {k}\n",
            "    return result\n",
            "\n",
            "\n",
        ]
        k += 1
    return lines[:count]


def _fastest(run: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def hunk_cost(count: int, rounds: int) -> HunkCost:
    lines = source_lines(count)
    text = "".join(lines)
    middle = next(i for i in range(count // 2, count) if lines[i].startswith("    result"))
    old_line = lines[middle]
    arguments = {"old_text": old_line, "new_text": old_line.replace("value", "value + 1")}
    codec = PositionCodec("utf-16")

    def agentls() -> None:
        hunks, _ = planned_edit(text, arguments, ("bench-key",), "big.py")
        apply_hunks(text, hunks)
        text_edits(text, hunks, codec)

    new_lines = [*lines[:middle], arguments["new_text"], *lines[middle + 1 :]]

    def whole_file_difflib() -> None:
        difflib.SequenceMatcher(None, lines, new_lines).get_opcodes()

    return HunkCost(count, _fastest(agentls, rounds), _fastest(whole_file_difflib, rounds))
