"""The review's rebase: the task's hunks moved onto what the user has now, those whose lines
the user changed too named as conflicts."""

from __future__ import annotations

from agentls.background.review import rebase
from agentls.edits import apply_hunks

BASE = "".join(f"{n}\n" for n in range(1, 11))


def test_unchanged_user_file_takes_every_hunk() -> None:
    task = BASE.replace("2\n", "two\n").replace("9\n", "nine\n")
    moved, conflicting = rebase(BASE, task, BASE)
    assert len(moved) == 2 and conflicting == []
    assert apply_hunks(BASE, moved) == task


def test_lines_added_above_move_the_hunks() -> None:
    task = BASE.replace("5\n", "five\n")
    mine = "top\nmore\n" + BASE
    moved, conflicting = rebase(BASE, task, mine)
    assert conflicting == []
    assert apply_hunks(mine, moved) == "top\nmore\n" + task
    assert moved[0].line == 7


def test_the_same_lines_changed_by_both_conflict() -> None:
    task = BASE.replace("5\n", "five\n").replace("9\n", "nine\n")
    mine = BASE.replace("5\n", "FIVE\n")
    moved, conflicting = rebase(BASE, task, mine)
    assert [h.line for h in conflicting] == [5]
    assert apply_hunks(mine, moved) == mine.replace("9\n", "nine\n")


def test_a_change_next_to_the_users_conflicts_as_in_a_merge() -> None:
    task = BASE.replace("5\n", "five\n")
    mine = BASE.replace("6\n", "SIX\n")
    moved, conflicting = rebase(BASE, task, mine)
    assert moved == [] and [h.line for h in conflicting] == [5]


def test_a_hunk_already_there_is_neither_proposed_nor_a_conflict() -> None:
    task = BASE.replace("2\n", "two\n").replace("9\n", "nine\n")
    reviewed_once = BASE.replace("2\n", "two\n")
    moved, conflicting = rebase(BASE, task, reviewed_once)
    assert conflicting == [] and [h.line for h in moved] == [9]
