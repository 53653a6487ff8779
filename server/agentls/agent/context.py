"""Keeping the conversation within its share of the model's context window.

The prompt is measured in characters and turned into tokens at the rate the API last
reported, so the estimate follows the real tokenizer. When it nears the budget, the oldest
tool results (and the long inputs of old edits) are replaced by a note: the model can read a
file again, but a task must never die of an over-long prompt. Eliding well below the budget
keeps the cached prefix stable for many steps after each cut. Images go first, oldest
first (each weighs as much as a page of text, and the model can read the file again), each
replaced by a one-line note.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..images import IMAGE_CHARS
from ..interfaces import Block, Messages, Model, Progress, PromptTooLong, Schemas, Turn
from .budget import LoopLimits

log = logging.getLogger(__name__)

ELIDE_DOWN_TO = 0.6
"""After a cut the prompt is at most this share of the budget."""

KEEP_CHARS = 200
"""Results and inputs this short are left alone: eliding them saves little and loses much."""

_ELIDED_RESULT = (
    "[elided to keep the conversation within its context budget: {chars:,} characters of "
    "this {tool} result were dropped; run the tool again if you need them]"
)
_ELIDED_INPUT = "[elided: {chars:,} characters]"
IMAGE_DROPPED = (
    "[an image was here; dropped to keep the conversation within its context budget: read "
    "it again if you need it]"
)


def block_chars(block: Block) -> int:
    """The characters a block puts into the prompt (its text, a tool call's input)."""
    if block.get("type") == "text":
        return len(block.get("text", ""))
    if block.get("type") == "image":
        return IMAGE_CHARS
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
        if removed:
            log.info("elided %d characters of old tool results (context budget)", removed)
        return removed

    async def ask(
        self,
        model: Model,
        system: str,
        schemas: Schemas,
        messages: Messages,
        limits: LoopLimits,
        progress: Progress,
    ) -> Turn:
        """The model's next turn, `messages` first brought within the prompt's share of the
        window; the answer held to the room the window leaves it (it goes there too)."""
        limit = limits.prompt_limit
        chars = prompt_chars(system, schemas, messages)
        chars -= self.fit(messages, chars, limit)

        async def respond() -> Turn:
            room = limits.context_window - self.estimate(chars)
            return await model.respond(
                system, messages, schemas, progress.text, on_notice=progress.notice, max_tokens=room
            )

        try:
            turn = await respond()
        except PromptTooLong as error:
            # The estimate fell short of the API's count (or the window is smaller than the
            # settings say): learn the real size, cut a fifth at least, and ask once more.
            self.observe(error.tokens or 2 * self.estimate(chars), chars)
            removed = self.fit(messages, chars, min(limit, int(self.estimate(chars) * 0.8)))
            if not removed:
                raise
            chars -= removed
            turn = await respond()
        self.observe(turn.usage.prompt, chars)
        return turn


def _has_image(block: Block) -> bool:
    content = block.get("content")
    nested = isinstance(content, list) and any(_has_image(part) for part in content)
    return block.get("type") == "image" or nested


def _without_images(block: Block) -> Block:
    """`block` with each image in it a note; the block itself when it holds none."""
    if not _has_image(block):
        return block
    if block.get("type") == "image":
        return {"type": "text", "text": IMAGE_DROPPED}
    content = block.get("content")
    if isinstance(content, list):
        return {**block, "content": [_without_images(part) for part in content]}
    return block


def _images(messages: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], int, Any]]:
    """Each block that is or holds an image, oldest first, with its replacement (a note for
    each image) and the saving."""
    for message in messages:
        for index, block in enumerate(message["content"]):
            shown = _without_images(block)
            if shown is not block:
                yield message, index, (shown, block_chars(block) - block_chars(shown))


def drop_images(messages: list[dict[str, Any]]) -> int:
    """Every image replaced by its note (before a compaction); the characters saved."""
    saved = 0
    for message, index, (shown, chars) in list(_images(messages)):
        message["content"][index] = shown
        saved += chars
    return saved


def _elidable(messages: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], int, Any]]:
    """Old blocks worth eliding, oldest first, each with its replacement and the saving:
    images first, but those of the newest exchange (the model is working on it), then
    text. The newest exchange stays whole.
    """
    yield from _images(messages[:-2])
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
