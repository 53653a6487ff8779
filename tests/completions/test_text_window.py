"""The lines around a change, found without splitting whole texts, agree with a full split."""

from __future__ import annotations

from agentls.completions.lines import split_lines
from agentls.completions.text_window import changed_window, lines_around
from agentls.edits import common_ends
from hypothesis import given
from hypothesis import strategies as st

# Mostly LF and CRLF texts (the fast path); a lone CR now and then (the full split).
pieces = st.sampled_from(["a", "b", "é", "\n", "\r\n", "\n", "\r\n", "\r"])
texts = st.lists(pieces, max_size=30).map("".join)


def changes(old: list[str], new: list[str], base: int) -> tuple[int, int, list[str]] | None:
    """Where the lines differ; None when only line breaks did (no place to name then)."""
    head, tail = common_ends(old, new)
    if head + tail == len(old) == len(new):
        return None
    return base + head, base + len(old) - tail, new[head : len(new) - tail]


@given(texts, texts, st.integers(min_value=1, max_value=4))
def test_the_window_finds_the_change_a_full_split_finds(
    before: str, after: str, reach: int
) -> None:
    old, new = split_lines(before), split_lines(after)
    window = changed_window(before, after, reach)
    assert window.total == len(old)
    assert window.old == old[window.base : window.base + len(window.old)]
    assert window.new == new[window.base : window.base + len(window.new)]
    assert changes(window.old, window.new, window.base) == changes(old, new, 0)


def test_a_big_text_is_split_only_around_the_change() -> None:
    before = "".join(f"line {n}\r\n" for n in range(100_000))
    after = before.replace("line 50000\r", "line 50000!\r")
    window = changed_window(before, after, 3)
    assert window.base == 49_997
    assert window.old == [f"line {n}" for n in range(49_997, 50_004)]
    assert window.new[3] == "line 50000!"


@given(texts, st.integers(min_value=-2, max_value=40), st.integers(min_value=1, max_value=4))
def test_the_lines_around_a_row_are_the_full_splits(text: str, row: int, reach: int) -> None:
    lines = split_lines(text)
    base, window, total = lines_around(text, row, reach)
    clamped = min(max(row, 0), len(lines) - 1)
    assert total == len(lines)
    assert base == max(clamped - reach, 0)
    assert window == lines[base : clamped + reach + 1]


def test_a_row_far_into_a_big_text_is_found_by_chunks() -> None:
    text = "".join(f"{n}\n" for n in range(200_000))
    assert lines_around(text, 150_000, 2) == (
        149_998,
        [str(n) for n in range(149_998, 150_003)],
        200_001,
    )
