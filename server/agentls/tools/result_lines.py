"""A tool's result as one line the user can read: the line shown under a step in every door.

A result is written for the model and may be anything a server sends: pretty-printed JSON
(whose first line is `{`), a blank line first, a wall of text. The user gets its first
sentence, or for JSON what it holds (`timezone: Etc/UTC, datetime: …` or `3 items`)."""

from __future__ import annotations

import json
from typing import Any

JSON_LIMIT = 64 * 1024
"""Longer results are not parsed as JSON (bounded before parsing): their first line is shown."""

WIDTH = 100
"""A summary made of JSON is cut here; it is a line, not the result."""

TEXT_WIDTH = 300
"""A sentence is cut here: an error's own words are worth a longer line, not a page."""


def result_line(text: str) -> str:
    """What a result says, in one line: JSON summarised, else its first sentence of words
    (a line of bare punctuation, `{` or `---`, says nothing; what follows the first sentence,
    "Do not retry it; ask or take another way.", is advice written for the model)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(stripped) <= JSON_LIMIT:
        try:
            return _cut(_json_line(json.loads(stripped)), WIDTH)
        except ValueError:
            pass
    line = next((line.strip() for line in text.splitlines() if _has_words(line)), "")
    sentence, stop, _ = line.partition(". ")
    return _cut(sentence + "." if stop else sentence, TEXT_WIDTH)


def _has_words(line: str) -> bool:
    return any(character.isalnum() for character in line)


def _json_line(value: Any) -> str:
    if isinstance(value, dict):
        pairs = [f"{key}: {_scalar(item)}" for key, item in value.items() if _is_scalar(item)]
        if not pairs:
            return _count(len(value), "key")
        return ", ".join(pairs)
    if isinstance(value, list):
        return _count(len(value), "item")
    return _scalar(value)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    return json.dumps(value)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"
