"""Keeping the conversation within its share of the model's context window.

The prompt is measured in characters and turned into tokens at the rate the API last
reported, so the estimate follows the real tokenizer. When it nears the budget, the oldest
tool results (and the long inputs of old edits) are replaced by a note: the model can read a
file again, but a task must never die of an over-long prompt. Eliding well below the budget
keeps the cached prefix stable for many steps after each cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..interfaces import Block

ELIDE_DOWN_TO = 0.6
"""After a cut the prompt is at most this share of the budget."""

KEEP_CHARS = 200
"""Results and inputs this short are left alone: eliding them saves little and loses much."""

_ELIDED_RESULT = (
    "[elided to keep the conversation within its context budget: {chars:,} characters of "
    "this {tool} result were dropped; run the tool again if you need them]"
)
_ELIDED_INPUT = "[elided: {chars:,} characters]"


def block_chars(block: Block) -> int:
    """The characters a block puts into the prompt (its text, a tool call's input)."""
    if block.get("type") == "text":
        return len(block.get("text", ""))
    if block.get("type") == "tool_use":
        return len(block.get("name", "")) + len(json.dumps(block.get("input"), ensure_ascii=False))
    content = block.get("content", "")
    if isinstance(content, str):
        return len(content)
    return sum(block_chars(part) for part in content)


def prompt_chars(system: str, tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> int:
    fixed = len(system) + len(json.dumps(tools))
    return fixed + sum(block_chars(b) for m in messages for b in m["content"])


@dataclass
class ContextBudget:
    """How long a prompt is in tokens, and cutting it down to a limit."""

    tokens_per_char: float = 1 / 3
    """Until the API reports a prompt's size: code runs at 3 to 4 characters a token."""

    def observe(self, prompt_tokens: int, chars: int) -> None:
        """Learn the rate from a prompt the API measured."""
        if prompt_tokens > 0 and chars > 0:
            self.tokens_per_char = prompt_tokens / chars

    def estimate(self, chars: int) -> int:
        return int(chars * self.tokens_per_char)

    def fit(self, messages: list[dict[str, Any]], chars: int, limit: int) -> int:
        """Elide old results until a prompt of `chars` characters is within `limit` tokens.

        Returns the characters removed (0 when it already fits or nothing can go).
        """
        if self.estimate(chars) <= limit:
            return 0
        target = limit * ELIDE_DOWN_TO
        removed = 0
        for message, index, saved in _elidable(messages):
            if self.estimate(chars - removed) <= target:
                break
            message["content"][index] = saved[0]
            removed += saved[1]
        return removed


def _elidable(messages: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], int, Any]]:
    """Old blocks worth eliding, oldest first, each with its replacement and the saving.

    The newest exchange stays whole: the model is working on it.
    """
    names: dict[str, str] = {}
    for message in messages[:-2]:
        for index, block in enumerate(message["content"]):
            if block.get("type") == "tool_use":
                names[block.get("id", "")] = block.get("name", "tool")
                shortened, saved = _shortened_input(block)
                if saved:
                    yield message, index, (shortened, saved)
            elif block.get("type") == "tool_result":
                chars = block_chars(block)
                tool = names.get(block.get("tool_use_id", ""), "tool")
                # A loaded skill's instructions hold for the whole task: kept.
                if chars > KEEP_CHARS and tool != "skill":
                    note = _ELIDED_RESULT.format(chars=chars, tool=tool)
                    yield message, index, ({**block, "content": note}, chars - len(note))


def _shortened_input(block: Block) -> tuple[Block, int]:
    """A tool call with its long string inputs (a file's new content) cut to a note."""
    values = block.get("input")
    if not isinstance(values, dict):
        return block, 0
    shortened, saved = {}, 0
    for key, value in values.items():
        if isinstance(value, str) and len(value) > KEEP_CHARS:
            shortened[key] = _ELIDED_INPUT.format(chars=len(value))
            saved += len(value) - len(shortened[key])
        else:
            shortened[key] = value
    return {**block, "input": shortened}, saved
