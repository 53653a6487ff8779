"""A language server that is out is named once to the user under `agentls run -p` whatever
the output format (issue 42): a `note` event in stream-json (test_own_servers.py), a line on
stderr in text and json, stdout keeping the answer alone; and once to the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eyes.test_own_servers import _settings, _stubborn
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import run


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_server_out_is_a_line_on_stderr_once(
    tmp_path: Path, fake: FakeAnthropic, output_format: str
) -> None:
    _settings(tmp_path, {mode: _stubborn(tmp_path, mode) for mode in ("silent", "crash")})
    write = tool_use("write_file", {"path": "a.py", "content": "a = 1\n"})
    again = tool_use("edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"})
    fake.script(reply(write), reply(again), reply(text("all done")))
    done = run(tmp_path, fake, "--yes", "-p", "write a.py", "--output-format", output_format)
    assert done.returncode == 0, done.stderr
    said = done.stderr.splitlines()
    silent = [line for line in said if line.startswith("agentls: the language server silent")]
    crash = [line for line in said if line.startswith("agentls: the language server crash")]
    assert len(silent) == 1 and "did not initialize within 1.5 s" in silent[0]
    assert len(crash) == 1 and "is out" in crash[0]
    if output_format == "text":
        assert done.stdout == "all done\n"
    else:
        assert json.loads(done.stdout)["summary"] == "all done"
    results = json.dumps([request.body["messages"][-1] for request in fake.requests[1:]])
    assert results.count("The language server silent") == 1  # and the model, once each
    assert results.count("The language server crash") == 1
