"""A local, scriptable fake of the Anthropic Messages API.

Every test (and later the benchmarks and the Lua/TypeScript editor tests) talks to
this instead of the network: point ``ANTHROPIC_BASE_URL`` (or the SDK's
``base_url``) at ``FakeAnthropic.url``. Standard library only, so it also runs as a
plain script for non-Python drivers.

Python use::

    with FakeAnthropic() as fake:
        fake.script(
            reply(tool_use("read_file", {"path": "a.py"})),   # stop_reason -> "tool_use"
            rate_limited(retry_after_ms=10),                   # 429, SDK retries
            lambda body: reply(text(f"saw {len(body['messages'])} messages")),
        )
        client = anthropic.Anthropic(api_key="k", base_url=fake.url)
        ...
        fake.requests        # [Recorded(body, headers, received)], headers lower-cased
        fake.billed          # Billing(input, cache_read, cache_write, output)
        fake.billed.billed_input   # input + 1.25 x cache writes + 0.1 x cache reads

Turns (consumed FIFO, one per ``POST /v1/messages``):

* ``Reply`` / ``reply(*blocks, stop_reason=None, delay=0, event_delay=0,
  drop_after=None, end_after=None, omit_message_stop=False)``. Blocks are
  ``text(str)`` and ``tool_use(name, input, id=None, raw_json=None, piece_chars=None)``
  (the input streamed in pieces of that many characters; default: three pieces);
  ``malformed_tool_use(name)`` streams unparseable input JSON. ``stop_reason``
  defaults to "tool_use" when a tool_use block is present, else "end_turn"; any
  string is passed through ("max_tokens", "refusal", ...). ``delay`` waits before
  the first byte; ``event_delay`` waits before every later SSE event. The stream
  faults only apply to ``stream: true`` requests: ``drop_after=N`` closes the socket
  after N events (no chunked terminator, so clients see a broken body),
  ``end_after=N`` ends the body cleanly after N events, ``omit_message_stop``
  ends it cleanly without ``message_stop``.
  A search Anthropic's API ran itself: ``reply(*web_search(query, [(url, title), ...]),
  cited(text, citation, ...))``: its ``server_tool_use`` and ``web_search_tool_result``
  blocks, then text with ``citations_delta`` events.
* ``Fault`` / ``fault(status, type, message, headers=None)``, plus shortcuts
  ``rate_limited``, ``overloaded``, ``server_error``, ``auth_error``,
  ``bad_request``. Body: ``{"type":"error","error":{"type":..,"message":..}}``.
* ``Hang`` / ``hang(seconds, then=None)``: waits, then plays ``then``; with no
  ``then`` (or when the fake stops) it closes the connection without answering.
* ``Replay`` / ``recorded(name)``: a real server's answer played back byte for byte
  (``fake_api.replay``; the recordings in ``recordings/``), ``.cut(n, silence)`` its first
  ``n`` events then a silence.
* A callable ``(body: dict) -> turn``, called when the request arrives.
* Shorthands accepted by ``script``: a ``str`` is a text reply, a lone block is a
  one-block reply.
* ``script_for(prompt, *turns)`` queues turns apart, for the requests whose first user
  message contains ``prompt``: tasks running side by side (a batch) each follow their own.

An empty queue answers 400 invalid_request_error "fake API: script exhausted";
400 is not retried, so a test that under-scripts fails at once. Requests are first
checked for the API's common 400s (missing fields, more than 4 cache breakpoints,
tool_use without a tool_result right after and vice versa); such a request is
recorded but consumes no turn. ``FakeAnthropic(validate=False)`` skips the checks;
``FakeAnthropic(context_window=N)`` also refuses prompts over N tokens with the API's
"prompt is too long: X tokens > N maximum".

JSON turn form (``POST /_fake/script`` takes a list, ``--script FILE`` too)::

    {"content": [{"text": "hi"}, {"tool_use": {"name": "n", "input": {}, "id": "x"}}],
     "stop_reason": "tool_use", "delay": 0, "event_delay": 0,
     "drop_after": null, "end_after": null, "omit_message_stop": false}
    {"text": "hi"}                       # shorthand: one-block reply (options allowed)
    {"tool_use": {"name": "n", "input": {}, "raw_json": "{bad"}}
    {"fault": {"status": 429, "type": "rate_limit_error", "message": "slow down",
               "headers": {"retry-after-ms": "10"}}}
    {"hang": 2.5, "then": {"text": "late"}}

``fake.server_info[(method, path)]`` answers a server's own endpoints (llama.cpp's
``GET /props``, Ollama's ``POST /api/show``) with JSON or a Replay.

Other control endpoints: ``GET /_fake/requests`` (recorded bodies),
``GET /_fake/billed``, ``POST /_fake/reset`` (script, requests, cache, billing, ids).

Token accounting mimics billing closely enough for benchmarks: ~4 characters per
token over the prompt serialised canonically in the API's order (tools, system,
messages). Prompt caching follows the documented rules: a breakpoint is any block
carrying ``cache_control``; the cache is keyed by a hash of the exact prefix up to
that block (``cache_control`` itself excluded, model included); a request looks for
hits at each breakpoint and up to 20 blocks before it and reads the longest one;
the prefix up to the last breakpoint, minus what was read, is billed as cache
creation; prefixes shorter than ``min_cacheable_tokens`` are never cached. Entries
never expire. See ``compute_input_usage``.

The same scripts drive ``FakeOpenAI`` (``fake_api.chat``), the Chat Completions API with
automatic prefix caching; see that module.

CLI: ``python -m fake_api [--format openai] [--port N] [--script FILE.json]`` (from
``tests/``) prints ``listening on http://127.0.0.1:PORT`` and serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

from .billing import Billing, InputUsage, compute_input_usage, estimate_tokens, output_tokens
from .limits import (
    CACHE_LOOKBACK_BLOCKS,
    CACHE_READ_RATE,
    CACHE_WRITE_RATE,
    DEFAULT_MIN_CACHEABLE_TOKENS,
    EXHAUSTED_MESSAGE,
)
from .replay import Replay, recorded
from .script import (
    Fault,
    Hang,
    Reply,
    ServerToolBlock,
    TextBlock,
    ToolUseBlock,
    Turn,
    auth_error,
    bad_request,
    cited,
    fault,
    hang,
    malformed_tool_use,
    overloaded,
    rate_limited,
    reply,
    server_error,
    text,
    tool_use,
    turn_from_json,
    web_search,
)
from .server import FakeAnthropic, Recorded
from .validation import validate_request

__all__ = [
    "CACHE_LOOKBACK_BLOCKS",
    "CACHE_READ_RATE",
    "CACHE_WRITE_RATE",
    "DEFAULT_MIN_CACHEABLE_TOKENS",
    "EXHAUSTED_MESSAGE",
    "Billing",
    "FakeAnthropic",
    "Fault",
    "Hang",
    "InputUsage",
    "Recorded",
    "Replay",
    "Reply",
    "ServerToolBlock",
    "TextBlock",
    "ToolUseBlock",
    "Turn",
    "auth_error",
    "bad_request",
    "cited",
    "compute_input_usage",
    "estimate_tokens",
    "fault",
    "hang",
    "malformed_tool_use",
    "output_tokens",
    "overloaded",
    "rate_limited",
    "recorded",
    "reply",
    "server_error",
    "text",
    "tool_use",
    "turn_from_json",
    "validate_request",
    "web_search",
]
