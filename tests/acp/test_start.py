"""`agentls acp` and the LSP server answer `initialize` without waiting for what a task needs
(the model's SDK, the loop and its tools): a client is answered as a bare SDK agent would be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

_SLOW_IMPORTS = """
import importlib.abc, sys, time

class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in {names!r}:
            time.sleep(60)
        return None

sys.meta_path.insert(0, Slow())
"""

_ACP = {"protocolVersion": 1, "clientCapabilities": {}}
_LSP = {"processId": None, "rootUri": None, "capabilities": {}}


def _lsp_message(body: dict[str, object]) -> bytes:
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


_SDKS = {"anthropic", "openai"}


@pytest.mark.parametrize(
    ("door", "names"),
    [
        # ACP: not the sessions' modules either (the loop, the tools, the store).
        pytest.param(["acp"], _SDKS | {"agentls.wiring"}, id="acp"),
        pytest.param([], _SDKS, id="lsp"),
    ],
)
def test_initialize_is_answered_before_a_task_needs_loading(
    door: list[str], names: set[str], tmp_path: Path
) -> None:
    """Imports of what a task needs take 60 s each here: the answer comes first (the bound
    is far from both a loaded machine's start-up and the slow import, so it times neither)."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(_SLOW_IMPORTS.format(names=names))
    env = {**os.environ, "PYTHONPATH": str(slow), "ANTHROPIC_API_KEY": "test-key"}
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    if door:
        sent = (json.dumps({**request, "params": _ACP}) + "\n").encode()
    else:
        sent = _lsp_message({**request, "params": _LSP})
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", *door],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(sent)
        process.stdin.flush()
        answer = process.stdout.readline() if door else process.stdout.read(16)
        assert answer, "no answer"
        assert time.monotonic() - started < 45, "initialize waited for the slow imports"
    finally:
        process.kill()
        process.wait(timeout=30)
