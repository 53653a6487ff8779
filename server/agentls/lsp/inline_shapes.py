"""The completion engine's outcome as LSP shapes: `InlineCompletionItem`s with ranges in the
negotiated encoding, and Copilot LS's params (which pygls hands over as named tuples) as the
plain JSON they were."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from .positions import PositionFinder

if TYPE_CHECKING:
    from ..completions.engine import Outcome


def completion_items(
    outcome: Outcome, text: str, codec: PositionCodec, cursor_line: int
) -> list[types.InlineCompletionItem]:
    """The completion at the cursor, then each next edit of one line away from the cursor's
    line, its range that whole line."""
    from ..completions.copilot_inline_edit import inline_edits

    finder = PositionFinder(text, codec)
    items = [
        types.InlineCompletionItem(
            insert_text=found.text,
            range=types.Range(finder.position(found.start), finder.position(found.end)),
        )
        for found in sorted(outcome.suggestions, key=lambda s: (s.start, s.end))
    ]
    away = [edit for edit in outcome.edits if edit.span == 1 and edit.line != cursor_line]
    for edit in inline_edits(away, text, "", 0, codec)["edits"]:
        start, end = edit["range"]["start"], edit["range"]["end"]
        items.append(
            types.InlineCompletionItem(
                insert_text=edit["text"],
                range=types.Range(
                    types.Position(start["line"], start["character"]),
                    types.Position(end["line"], end["character"]),
                ),
            )
        )
    return items


def plain(value: Any) -> Any:
    """JSON as it came: pygls turns the params of a method it does not know into nested
    named tuples."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value
