"""The recent edits of each document: Zed's diff text, coalescing, and the caps."""

from __future__ import annotations

from agentls.completions import edit_history
from agentls.completions.edit_history import EditHistory
from agentls.completions.udiff import unified_diff

URI = "file:///w/a.txt"


def test_the_diff_is_zeds_unified_diff() -> None:
    # zed's crates/language text_diff tests, on the same texts.
    assert unified_diff(["foo", "bar", "baz"], ["foo", "BAR", "baz"]) == (
        "@@ -1,3 +1,3 @@\n foo\n-bar\n+BAR\n baz\n"
    )
    assert unified_diff(["foo", "bar", "baz"], ["foo", "BAR", "baz"], 9).startswith(
        "@@ -10,3 +10,3 @@\n"
    )
    old = ["one two", "three four five", "six seven eight nine", "ten"]
    new = ["one two", "three FOUR five", "six SEVEN eight nine", "ten", "ELEVEN"]
    assert unified_diff(old, new) == (
        "@@ -1,4 +1,5 @@\n one two\n-three four five\n-six seven eight nine\n"
        "+three FOUR five\n+six SEVEN eight nine\n ten\n+ELEVEN\n"
    )


def test_changes_seven_lines_apart_are_two_hunks() -> None:
    old = [f"l{n}" for n in range(20)]
    new = [*old]
    new[2], new[10] = "A", "B"
    assert unified_diff(old, new) == (
        "@@ -1,6 +1,6 @@\n l0\n l1\n-l2\n+A\n l3\n l4\n l5\n"
        "@@ -8,7 +8,7 @@\n l7\n l8\n l9\n-l10\n+B\n l11\n l12\n l13\n"
    )


def test_one_edit_is_zeds_user_edited_event() -> None:
    history = EditHistory()
    assert not history.has_edits(URI)
    history.record(URI, "foo\nbar\nbaz\n", "foo\nBAR\nbaz\n")
    assert history.has_edits(URI)
    assert history.diff(URI, "src/a.txt") == (
        'User edited "src/a.txt":\n```diff\n@@ -1,3 +1,3 @@\n foo\n-bar\n+BAR\n baz\n\n```'
    )


def type_into(history: EditHistory, text: str, line: int, word: str) -> str:
    """Type `word` at the end of `line`, one didChange a character."""
    for char in word:
        lines = text.split("\n")
        lines[line] += char
        after = "\n".join(lines)
        history.record(URI, text, after)
        text = after
    return text


def test_typing_on_a_line_and_its_neighbours_is_one_group() -> None:
    history = EditHistory()
    text = "\n".join(f"l{n}" for n in range(60))
    text = type_into(history, text, 20, "abc")
    text = type_into(history, text, 22, "de")
    diff = history.diff(URI, "a")
    assert diff.count("User edited") == 1
    assert (
        "@@ -18,9 +18,9 @@\n l17\n l18\n l19\n-l20\n+l20abc\n l21\n-l22\n+l22de\n l23\n l24\n l25\n"
    ) in diff


def test_a_far_edit_starts_a_new_group_and_old_groups_keep_their_lines() -> None:
    history = EditHistory()
    text = "\n".join(f"l{n}" for n in range(100))
    text = type_into(history, text, 60, "x")
    # Lines inserted above it later: the first group's diff keeps the lines of its time.
    after = text.replace("l10\n", "l10\nnew\nnew\n")
    history.record(URI, text, after)
    events = history.diff(URI, "a").split("\n\nUser edited")
    assert len(events) == 2
    assert "@@ -58,7 +58,7 @@\n l57\n l58\n l59\n-l60\n+l60x\n" in events[0]
    assert "@@ -9,6 +9,8 @@\n l8\n l9\n l10\n+new\n+new\n l11\n" in events[1]


def test_only_the_last_groups_are_kept() -> None:
    history = EditHistory()
    text = "\n".join(f"l{n}" for n in range(400))
    for n in range(8):
        text = type_into(history, text, n * 40, "!")
    diff = history.diff(URI, "a")
    assert diff.count("User edited") == edit_history.MAX_GROUPS
    assert "+l120!" in diff and "+l80!" not in diff


def test_the_section_keeps_the_newest_groups_within_zeds_budget() -> None:
    history = EditHistory()
    text = "\n".join(f"{n:03}" + "x" * 117 for n in range(400))
    for n in range(5):
        text = type_into(history, text, n * 40, "!")
    diff = history.diff(URI, "a")
    assert len(diff.encode()) // 3 <= edit_history.EVENT_TOKENS
    assert 0 < diff.count("User edited") < 5
    context = "".join(f"\n {n}" + "x" * 117 for n in range(161, 164))
    assert diff.endswith(f"\n+160{'x' * 117}!{context}\n\n```")


def test_a_huge_paste_is_not_recorded_and_ends_the_group() -> None:
    history = EditHistory()
    text = "\n".join(f"l{n}" for n in range(60))
    text = type_into(history, text, 10, "a")
    pasted = text.replace("l11\n", "P" * 10_000 + "\n")
    history.record(URI, text, pasted)
    assert "PPP" not in history.diff(URI, "a")
    # The next edit next to it no longer joins the group before the paste.
    type_into(history, pasted, 16, "b")
    assert history.diff(URI, "a").count("User edited") == 2


def test_a_reverted_edit_is_no_edit() -> None:
    history = EditHistory()
    history.record(URI, "a\nb", "a\nbc")
    history.record(URI, "a\nbc", "a\nb")
    assert not history.has_edits(URI)
    assert history.diff(URI, "a") == ""


def test_the_files_last_line_break_is_not_a_line_of_its_own() -> None:
    history = EditHistory()
    history.record(URI, "a\n", "a\nx")
    assert history.diff(URI, "a") == 'User edited "a":\n```diff\n@@ -1,1 +1,2 @@\n a\n+x\n\n```'


def test_crlf_documents_and_quoted_paths() -> None:
    history = EditHistory()
    history.record(URI, "a\r\nb\r\n", "a\r\nB\r\n")
    assert history.diff(URI, 'we"ird\\dir/é.txt') == (
        'User edited "we\\"ird\\\\dir/é.txt":\n```diff\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n\n```'
    )


def test_forget_and_the_cap_on_documents() -> None:
    history = EditHistory()
    for n in range(edit_history.MAX_DOCUMENTS + 1):
        history.record(f"file:///{n}", "a", "b")
    assert not history.has_edits("file:///0")
    assert history.has_edits("file:///1")
    history.forget("file:///1")
    assert not history.has_edits("file:///1")
    assert history.diff("file:///1", "a") == ""


def test_changing_only_line_breaks_is_no_edit_and_drops_no_group() -> None:
    history = EditHistory()
    history.record(URI, "a\nb\n", "a\nB\n")
    for _ in range(edit_history.MAX_GROUPS):
        history.record(URI, "a\nB\n", "a\r\nB\r\n")
        history.record(URI, "a\r\nB\r\n", "a\nB\n")
    assert "+B" in history.diff(URI, "a")
