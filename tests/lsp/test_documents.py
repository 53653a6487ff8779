"""Open documents: incremental changes land where LSP says, on any text, in any encoding."""

from __future__ import annotations

from agentls.lsp.documents import LspDocument, line_start
from hypothesis import given
from hypothesis import strategies as st
from lsp_text import line_span, units
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

pieces = st.sampled_from(
    ["a", "bc", "é", "中", "😀", "e\u0301", "\r", "\n", "\r\n", "\f", "\u2028"]
)
texts = st.lists(pieces, max_size=40).map("".join)


def reference_offset(text: str, line: int, character: int, encoding: str) -> int:
    """The offset as the specification defines it (lsp_text's oracle), a column inside a
    character taken as the character's end, as pygls does."""
    start, end = line_span(text, line)
    counted = 0
    while start < end and counted < character:
        counted += units(text[start], encoding)
        start += 1
    return start


@given(
    texts,
    st.integers(0, 12),
    st.integers(0, 6),
    st.integers(0, 3),
    st.integers(0, 6),
    texts,
    st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_an_incremental_change_lands_where_the_spec_says(
    text: str,
    start_line: int,
    start_character: int,
    extra_lines: int,
    end_character: int,
    new_text: str,
    encoding: str,
) -> None:
    end_line = start_line + extra_lines
    if extra_lines == 0:
        end_character = max(end_character, start_character)
    document = LspDocument(
        "file:///a.txt", text, version=1, position_codec=PositionCodec(encoding=encoding)
    )
    document.apply_change(
        types.TextDocumentContentChangePartial(
            range=types.Range(
                types.Position(start_line, start_character), types.Position(end_line, end_character)
            ),
            text=new_text,
        )
    )
    start = reference_offset(text, start_line, start_character, encoding)
    end = max(reference_offset(text, end_line, end_character, encoding), start)
    assert document.source == text[:start] + new_text + text[end:]


@given(texts, st.integers(0, 12), st.integers(0, 6), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_a_position_is_the_offset_the_spec_says(
    text: str, line: int, character: int, encoding: str
) -> None:
    document = LspDocument(
        "file:///a.txt", text, version=1, position_codec=PositionCodec(encoding=encoding)
    )
    offset = document.offset_at_position(types.Position(line, character))
    assert offset == reference_offset(text, line, character, encoding)


def test_line_starts_in_a_big_text_with_every_kind_of_break() -> None:
    lines = [f"line {n}" + ("\r\n", "\r", "\n")[n % 3] for n in range(30_000)]
    text = "".join(lines)
    for line in (0, 1, 2, 9_999, 21_845, 29_999, 30_000, 40_000):
        assert line_start(text, line) == len("".join(lines[:line]))
    assert line_start(text, 3, line_start(text, 100)) == len("".join(lines[:103]))
