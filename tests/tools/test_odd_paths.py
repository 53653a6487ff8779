"""Odd paths in a workspace: a file name that is not UTF-8 (issue 9, finding 11), symlink
loops (a low of the same issue)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from agentls.tools import run_tool
from doubles import tool_context as context
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from scripts import echo_result, result_text


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


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
async def test_symlink_loops_break_no_tool(root: Path, git: bool) -> None:
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "a.txt").write_text("hello\n")
    (root / "loop").symlink_to("loop")
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")
    (root / "d").mkdir()
    (root / "d" / "up").symlink_to("..")
    ctx = context(root)
    listed, error = await run_tool(ctx, "list_files", {})
    assert not error and "a.txt" in listed.splitlines()
    found, error = await run_tool(ctx, "grep", {"pattern": "hello"})
    assert (found, error) == ("a.txt:1: hello", False)
    for tool, arguments in [
        ("read_file", {"path": "loop"}),
        ("read_file", {"path": "ping/x"}),
        ("write_file", {"path": "loop/x", "content": "x"}),
    ]:
        text, error = await run_tool(ctx, tool, arguments)
        assert error and "failed" not in text, (tool, text)
    text, error = await run_tool(ctx, "read_file", {"path": "d/up/d/up/a.txt"})
    assert (text, error) == ("1\thello", False)
