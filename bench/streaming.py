"""A long tool input streamed in small deltas, as a model writing a big file sends it:
agentls's model client (the real SDK) beside the same input in one delta, and beside a
minimal streaming reader of the very same events (http.client, a JSON parse per event line, the
pieces joined and parsed once): the floor any client pays for reading those events.

The fake API runs in a process of its own, as a real API would: in the bench's process, its
writing of the events would take turns with the reading under one interpreter lock."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from agentls.models import providers
from agentls.models.anthropic import AnthropicModel, ClientCache

from .api import FakeAnthropic, reply, tool_use

HELLO = [{"role": "user", "content": [{"type": "text", "text": "write it"}]}]
DELTA_CHARS = 40
KEY = "bench-key"


@dataclass(frozen=True)
class Streamed:
    input_bytes: int
    small_deltas: float
    one_delta: float
    minimal_reader: float


def _content(size: int) -> str:
    line = 'print("a line of code", 42)  # and a comment\n'
    return (line * (size // len(line) + 1))[:size]


def _turn(content: str, piece: int) -> Any:
    return reply(tool_use("write_file", {"path": "big.py", "content": content}, piece_chars=piece))


def _serve(size: int, rounds: int) -> None:
    """The fake API with every answer of `streamed_write` scripted, in its order; the port on
    standard output, until standard input closes."""
    content = _content(size)
    with FakeAnthropic() as fake:
        fake.script(_turn(content[:100], DELTA_CHARS))  # the SDK's one-time set-up
        for _ in range(rounds):
            small, one = _turn(content, DELTA_CHARS), _turn(content, len(content) + 10)
            fake.script(small, one, small)
        print(fake.port, flush=True)
        sys.stdin.read()


async def _ours(model: AnthropicModel, content: str) -> float:
    started = time.perf_counter()
    turn = await model.respond("system", HELLO, [], lambda text: None)
    seconds = time.perf_counter() - started
    if turn.content[-1]["input"]["content"] != content:
        raise RuntimeError("the streamed input came back different")
    return seconds


def _minimal(port: int, content: str) -> float:
    arguments = {"path": "big.py", "content": content}
    body = {"model": "claude-bench", "max_tokens": 1000, "messages": HELLO, "stream": True}
    headers = {
        "x-api-key": KEY,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
    }
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    connection.request("POST", "/v1/messages", json.dumps(body), headers)
    answer = connection.getresponse()
    pieces: list[str] = []
    found: Any = None
    for line in answer:
        if not line.startswith(b"data: "):
            continue
        event = json.loads(line[6:])
        if event["type"] == "content_block_delta":
            pieces.append(event["delta"].get("partial_json", ""))
        elif event["type"] == "content_block_stop":
            found = json.loads("".join(pieces))
    connection.close()
    seconds = time.perf_counter() - started
    if found != arguments:
        raise RuntimeError("the minimal reader read something else")
    return seconds


async def streamed_write(size: int, rounds: int) -> Streamed:
    content = _content(size)
    small, one, floor = [], [], []
    serving = [sys.executable, "-m", "bench.streaming", str(size), str(rounds)]
    with subprocess.Popen(serving, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as fake:
        assert fake.stdin is not None and fake.stdout is not None
        port = int(fake.stdout.readline())
        url = f"http://127.0.0.1:{port}"
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url}
        endpoint = providers.endpoint(None, None, env)
        clients = ClientCache()
        model = AnthropicModel(clients.get(endpoint), "claude-bench", 1000, endpoint, env, 300.0)
        await _ours(model, content[:100])
        for _ in range(rounds):
            small.append(await _ours(model, content))
            one.append(await _ours(model, content))
            floor.append(_minimal(port, content))
        await clients.close()
        fake.stdin.close()
    # The least of each: what the machine's other work added is noise, not the client's cost.
    return Streamed(len(content), min(small), min(one), min(floor))


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
