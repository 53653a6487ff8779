"""A file name that is not UTF-8 is shown escaped, and the session goes on (issue 9,
finding 11)."""

from __future__ import annotations

import os
from pathlib import Path

from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from test_lsp import echo_result, result_text


async def test_a_file_name_that_is_not_utf8_breaks_no_later_task(
    fake: FakeAnthropic, root: Path
) -> None:
    with open(os.path.join(os.fsencode(root), b"caf\xe9.txt"), "w") as file:
        file.write("hello\n")
    fake.script(
        reply(tool_use("list_files", {})),
        echo_result,
        reply(tool_use("grep", {"pattern": "hello"})),
        echo_result,
        reply(text("still here")),
    )
    async with editor(root, fake.url) as client:
        first = await client.run_task("list")
        second = await client.run_task("grep")
        third = await client.run_task("again")
    assert first["status"] == "done" and first["summary"] == "told: caf\\xe9.txt"
    assert second["status"] == "done" and second["summary"] == "told: caf\\xe9.txt:1: hello"
    assert third["status"] == "done"
    assert "caf\\xe9.txt" in result_text(fake.requests[1].body)
