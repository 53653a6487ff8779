"""Hunks, what landed, and LSP positions in every encoding."""

from __future__ import annotations

import pytest
from agentls.edits import apply_hunks, landed, line_hunks, unified_diff
from agentls.lsp.positions import PositionFinder, text_edits
from hypothesis import given
from hypothesis import strategies as st
from lsp_text import apply_text_edits
from lsprotocol.types import PositionEncodingKind
from pygls.workspace.position_codec import PositionCodec

ENCODINGS = [PositionEncodingKind.Utf8, PositionEncodingKind.Utf16, PositionEncodingKind.Utf32]


def test_hunks_are_minimal_and_separate() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 3\n", "LINE 3\n").replace("line 15\n", "line 15\nadded\n")
    hunks = line_hunks(old, new)
    assert [(h.line, h.old_line_count, h.new_line_count) for h in hunks] == [(3, 1, 1), (16, 0, 1)]
    assert [h.text for h in hunks] == ["LINE 3\n", "added\n"]
    assert hunks[1].describe() == "insertion before line 16"
    assert apply_hunks(old, hunks) == new


def test_landed_tells_which_hunks_were_accepted() -> None:
    old = "a\nb\nc\nd\ne\n"
    new = "A\nb\nc\nD\ne\nF\n"
    hunks = line_hunks(old, new)
    assert len(hunks) == 3
    assert landed(old, hunks, new) == [True, True, True]
    assert landed(old, hunks, old) == [False, False, False]
    assert landed(old, hunks, "A\nb\nc\nd\ne\nF\n") == [True, False, True]
    assert landed(old, hunks, "something else\n") is None


@given(
    st.lists(st.sampled_from(["x\n", "y\n", "z\n", "中文\n", "😀\r\n", "\n"]), max_size=12),
    st.lists(st.sampled_from(["x\n", "y\n", "q\n", "中文\n", "😀\r\n"]), max_size=12),
    st.data(),
)
def test_any_subset_of_hunks_is_recognised(a: list[str], b: list[str], data: st.DataObject) -> None:
    old, new = "".join(a), "".join(b)
    hunks = line_hunks(old, new)
    assert apply_hunks(old, hunks) == new
    chosen = data.draw(st.lists(st.booleans(), min_size=len(hunks), max_size=len(hunks)))
    after = apply_hunks(old, [h for h, keep in zip(hunks, chosen, strict=True) if keep])
    found = landed(old, hunks, after)
    assert found is not None
    # Ambiguous texts may be explained by another choice; it must give the same text.
    assert apply_hunks(old, [h for h, keep in zip(hunks, found, strict=True) if keep]) == after


CASES = {
    "cjk and emoji": ("名前 = '😀'\nvalue = 1\nend 🎉\n", "名前 = '😀😀'\nvalue = 2\nend 🎉\n"),
    "crlf": ("one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nthree\r\n"),
    "empty file": ("", "new content\n"),
    "to empty": ("gone\n", ""),
    "no final newline": ("a\nb", "a\nb\nc"),
    "last line changes": ("a\nlast 😀", "a\nLAST 😀"),
    "lone cr": ("a\rb\rc\r", "a\rB\rc\r"),
    "form feed and line separator": ("a\x0cb\u2028c\nx = 1\n", "a\x0cb\u2028c\nx = 2\n"),
}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("case", CASES)
def test_text_edits_apply_exactly_in_every_encoding(case: str, encoding: str) -> None:
    old, new = CASES[case]
    edits = text_edits(old, line_hunks(old, new), PositionCodec(encoding))
    assert edits
    assert apply_text_edits(old, edits, encoding) == new


@pytest.mark.parametrize(
    ("encoding", "character"),
    [
        (PositionEncodingKind.Utf8, 8),
        (PositionEncodingKind.Utf16, 4),
        (PositionEncodingKind.Utf32, 3),
    ],
)
def test_columns_count_code_units(encoding: str, character: int) -> None:
    text = "x\n中😀x|"  # the bar: after 中 (3/1/1 units), 😀 (4/2/1) and x (1/1/1)
    finder = PositionFinder(text, PositionCodec(encoding))
    position = finder.position(text.index("|"))
    assert (position.line, position.character) == (1, character)


def test_end_of_text_without_final_newline_stays_on_last_line() -> None:
    finder = PositionFinder("a\nbc", PositionCodec(PositionEncodingKind.Utf16))
    end = finder.position(4)
    assert (end.line, end.character) == (1, 2)


def test_empty_document_position() -> None:
    finder = PositionFinder("", PositionCodec(PositionEncodingKind.Utf16))
    start = finder.position(0)
    assert (start.line, start.character) == (0, 0)


def test_unified_diff_marks_missing_final_newline() -> None:
    diff = unified_diff("a\nb", "a\nc", "f.txt")
    assert "-b\n\\ No newline at end of file\n+c\n" in diff
