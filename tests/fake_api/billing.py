"""Token accounting and prompt caching, as the API bills them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .limits import (
    CACHE_LOOKBACK_BLOCKS,
    CACHE_READ_RATE,
    CACHE_WRITE_RATE,
    CHARS_PER_TOKEN,
    DEFAULT_MIN_CACHEABLE_TOKENS,
)
from .script import Block, ServerToolBlock, TextBlock


def estimate_tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def prompt_blocks(body: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The prompt as (canonical text, carries a breakpoint) in the API's cache order."""

    def entry(kind: str, block: Any) -> tuple[str, bool]:
        if not isinstance(block, dict):
            return canonical([kind, block]), False
        # cache_control is left out of the key so that moving a breakpoint does not
        # change the identity of the prefix it sits on, as with the real cache.
        bare = {k: v for k, v in block.items() if k != "cache_control"}
        return canonical([kind, bare]), bool(block.get("cache_control"))

    out = [entry("tool", t) for t in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str):
        if system:
            out.append(entry("system", {"type": "text", "text": system}))
    elif isinstance(system, list):
        out.extend(entry("system", b) for b in system)
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out.extend(entry(role, b) for b in content or [])
    return out


@dataclass(frozen=True)
class InputUsage:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


def compute_input_usage(
    body: Mapping[str, Any],
    cached: Collection[str],
    *,
    min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
    lookback: int = CACHE_LOOKBACK_BLOCKS,
) -> tuple[InputUsage, frozenset[str]]:
    """Bill one request's prompt against the prefix-hash set ``cached``.

    Pure: returns the usage and the cache keys this request writes; the caller
    decides whether to add them.
    """
    blocks = prompt_blocks(body)
    # Chained hashes make each key identify its whole prefix in O(n) total work.
    digest = hashlib.sha256(canonical(["model", body.get("model")]).encode()).hexdigest()
    keys: list[str] = []
    tokens_to: list[int] = []  # tokens of the prefix ending at block i, inclusive
    chars = 0
    for block_text, _ in blocks:
        digest = hashlib.sha256(f"{digest}\n{block_text}".encode()).hexdigest()
        keys.append(digest)
        chars += len(block_text)
        tokens_to.append(estimate_tokens(chars))
    total = tokens_to[-1] if tokens_to else 0

    def cacheable(i: int) -> bool:
        return tokens_to[i] >= min_cacheable_tokens

    breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
    hit = -1
    for bp in breakpoints:
        for i in range(bp, max(bp - lookback, 0) - 1, -1):
            if keys[i] in cached and cacheable(i):
                hit = max(hit, i)
                break
    read = tokens_to[hit] if hit >= 0 else 0
    write = 0
    if breakpoints and breakpoints[-1] > hit and cacheable(breakpoints[-1]):
        write = tokens_to[breakpoints[-1]] - read
    new_keys = frozenset(keys[i] for i in breakpoints if cacheable(i)) - frozenset(cached)
    return InputUsage(total - read - write, read, write), new_keys


def over_window(body: Mapping[str, Any], window: int) -> str | None:
    tokens = estimate_tokens(sum(len(block_text) for block_text, _ in prompt_blocks(body)))
    return f"prompt is too long: {tokens} tokens > {window} maximum" if tokens > window else None


def output_tokens(content: Iterable[Block]) -> int:
    chars = 0
    for block in content:
        if isinstance(block, TextBlock):
            chars += len(block.text)
        elif isinstance(block, ServerToolBlock):
            chars += len(canonical(block.block))
        else:
            raw = block.raw_json if block.raw_json is not None else canonical(block.input)
            chars += len(block.name) + len(raw)
    return max(1, estimate_tokens(chars))


@dataclass
class Billing:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    @property
    def billed_input(self) -> float:
        """Input as the API bills it, in base input tokens (cache reads and writes weighted)."""
        return self.input + CACHE_WRITE_RATE * self.cache_write + CACHE_READ_RATE * self.cache_read
