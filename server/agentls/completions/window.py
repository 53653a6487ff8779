"""The prompt's two halves: the text before the cursor and after it, bounded, cut exactly at
the cursor, with every known secret redacted (and never a piece of one at a cut)."""

from __future__ import annotations

from dataclasses import dataclass

from ..redaction import redact, secret_spans

BEFORE = 6000
"""Characters of the prefix at most: a small model's context, and a bounded cost per key."""
AFTER = 2000


@dataclass(frozen=True)
class Window:
    prefix: str
    suffix: str


def window(
    text: str, offset: int, secrets: tuple[str, ...], before: int = BEFORE, after: int = AFTER
) -> Window | None:
    """The halves around `offset`; None when the cursor stands inside a secret (no half of it
    may go out). A secret across either far cut is left out whole."""
    low, high = max(0, offset - before), min(len(text), offset + after)
    margin = max((len(secret) for secret in secrets), default=0)
    start = max(0, low - margin)
    for found_start, found_end in secret_spans(text[start : high + margin], secrets):
        span_start, span_end = found_start + start, found_end + start
        if span_start < offset < span_end:
            return None
        if span_start < low < span_end:
            low = span_end
        if span_start < high < span_end:
            high = span_start
    return Window(redact(text[low:offset], secrets), redact(text[offset:high], secrets))
