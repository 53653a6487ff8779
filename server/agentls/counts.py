"""Counts in words for the user's lines: `1 step`, `2 steps`."""

from __future__ import annotations


def counted(number: int, noun: str) -> str:
    """`number` and `noun`, plural unless there is one (nouns with a plain `s` plural)."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
