"""The fake's numbers: token estimates, cache rules, and fixed messages."""

from __future__ import annotations

CHARS_PER_TOKEN = 4
CACHE_READ_RATE = 0.1
CACHE_WRITE_RATE = 1.25
"""What a cached token costs, in base input tokens: reads 0.1x, (5-minute) writes 1.25x."""
DEFAULT_MIN_CACHEABLE_TOKENS = 1024
CACHE_LOOKBACK_BLOCKS = 20
MAX_CACHE_BREAKPOINTS = 4
EXHAUSTED_MESSAGE = "fake API: script exhausted"
# Default malformed tool input: truncation alone is not enough, because the SDK
# parses partial JSON leniently; a doubled comma is rejected by every parser.
MALFORMED_JSON = '{"path": "a.py",, }'
