"""Inline completions: agentls's own time per request (request in, answer out, minus the
model's exchange as the fake model saw it) on a 2,000-line buffer, after warm-up, beside the
model's own time. The server is the real process; the debounce is 0 (a chosen wait, not
work)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from tests.fake_api.completions import FakeCompletions, inline_params

from .big_file_edit import source_lines
from .editor import BenchEditor, server_command
from .runs import SETTINGS

LINES = 2000
WARM_UP = 5


@dataclass(frozen=True)
class CompletionOverhead:
    lines: int
    rounds: int
    agentls_ms: float
    """Median of (the client's round trip - the model's exchange)."""
    model_ms: float
    """Median of the model's exchange: its request arrived to its answer written."""


async def completion_overhead(
    env: dict[str, str], root: Path, rounds: int, model_seconds: float
) -> CompletionOverhead:
    path = root / "completion_bench.py"
    path.write_text("".join(source_lines(LINES)))
    with FakeCompletions("value * 2") as models:
        models.delay = model_seconds
        completions = {"enabled": True, "model": "ollama/bench", "baseUrl": models.url}
        editor = BenchEditor({**SETTINGS, "completions": {**completions, "debounceMs": 0}})
        await editor.start(server_command("agentls"), env, root)
        own, model = [], []
        try:
            editor.open(path)
            uri = path.as_uri()
            for round_ in range(WARM_UP + rounds):
                line = (round_ * 37) % LINES  # a different cursor each time, as typing moves it
                started = time.perf_counter()
                answer = await editor.text_document_inline_completion_async(
                    inline_params(uri, line, 4)
                )
                seconds = time.perf_counter() - started
                seen = models.completed[-1]
                if not isinstance(answer, types.InlineCompletionList) or not answer.items:
                    raise RuntimeError(f"no completion: {answer!r} {editor.errors}")
                assert seen.answered is not None
                exchange = seen.answered - seen.received
                if round_ >= WARM_UP:
                    own.append((seconds - exchange) * 1000)
                    model.append(exchange * 1000)
        finally:
            await editor.close()
    return CompletionOverhead(LINES, rounds, statistics.median(own), statistics.median(model))
