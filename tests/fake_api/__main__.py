"""`python -m fake_api`: serve a fake for drivers that are not Python (the VS Code e2e test);
`--format openai` serves the Chat Completions one, `--format completions` the endpoints of
inline completions (`fake_api.completions`), answering `--answer` to every request."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from .chat import FakeOpenAI
from .completions import FakeCompletions
from .limits import DEFAULT_MIN_CACHEABLE_TOKENS
from .script import turn_from_json
from .server import FakeAnthropic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake model API (Anthropic, OpenAI, completions).")
    parser.add_argument(
        "--format", choices=("anthropic", "openai", "completions"), default="anthropic"
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", metavar="FILE.json", help="JSON list of turns to queue")
    parser.add_argument("--min-cacheable-tokens", type=int, default=DEFAULT_MIN_CACHEABLE_TOKENS)
    parser.add_argument("--answer", default="completion()", help="completions: the model's text")
    args = parser.parse_args(argv)
    if args.format == "completions":
        with FakeCompletions(args.answer, args.port) as completions:
            return _serve(completions.url)

    kind = FakeOpenAI if args.format == "openai" else FakeAnthropic
    fake = kind(args.port, min_cacheable_tokens=args.min_cacheable_tokens)
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            loaded = json.load(f)
        items = loaded if isinstance(loaded, list) else [loaded]
        fake.script(*(turn_from_json(t) for t in items))

    fake.start()
    try:
        return _serve(fake.url)
    finally:
        fake.stop()


def _serve(url: str) -> int:
    """Say where the fake listens, then serve until SIGTERM/SIGINT."""
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    print(f"listening on {url}", flush=True)
    # Polling rather than a bare wait() keeps the main thread responsive to signals.
    while not done.wait(0.2):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
