"""Big files: a diff that stays near linear, and heavy work kept off the event loop so a
cancel is answered at once (issue 9, finding 13)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from pathlib import Path

from agentls.edits import apply_hunks, line_hunks
from agentls.tools import run_tool
from doubles import tool_context as context
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use

# Lines that repeat (blank ones, the same statement) are what make an exact diff quadratic.
BIG = "".join(f"def f_{i}():\n    return value\n\n" for i in range(10_000))


async def test_replace_all_on_a_30k_line_file_leaves_cancel_answered_at_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "big.py").write_text(BIG)
    ctx = context(tmp_path)
    arguments = {"path": "big.py", "old_text": "value", "new_text": "result", "replace_all": True}
    started = time.monotonic()
    job = asyncio.ensure_future(run_tool(ctx, "edit_file", arguments))
    await asyncio.sleep(0.05)
    job.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await job
    assert time.monotonic() - started < 1.0
    started = time.monotonic()
    text, error = await run_tool(ctx, "edit_file", arguments)
    assert not error and "all 10000 hunks accepted" in text
    assert time.monotonic() - started < 10  # 49 s before, about 1 s on a busy 2-core machine
    assert (tmp_path / "big.py").read_text() == BIG.replace("value", "result")


async def test_replace_all_on_every_line_of_a_big_file(tmp_path: Path) -> None:
    lines = "".join(f"x = value + {i % 10}\n" for i in range(30_000))
    (tmp_path / "every.py").write_text(lines)
    started = time.monotonic()
    text, error = await run_tool(
        context(tmp_path),
        "edit_file",
        {"path": "every.py", "old_text": "value", "new_text": "v", "replace_all": True},
    )
    assert not error and text == "Edited every.py: 1 hunk accepted."
    assert time.monotonic() - started < 10
    assert (tmp_path / "every.py").read_text() == lines.replace("value", "v")


def test_a_rewrite_of_a_big_file_is_diffed_quickly_and_exactly() -> None:
    started = time.monotonic()
    new = BIG
    for number in (17, 5000, 9998):
        function = f"def f_{number}():\n    return "
        new = new.replace(function + "value", function + "1")
    hunks = line_hunks(BIG, new)
    assert time.monotonic() - started < 10
    assert apply_hunks(BIG, hunks) == new
    assert [(h.line, h.old_line_count, h.text) for h in hunks] == [
        (3 * number + 2, 1, "    return 1\n") for number in (17, 5000, 9998)
    ]


def test_the_bounded_diff_is_still_a_diff() -> None:
    chooser = random.Random(9)
    lines = [f"line {chooser.randrange(50)}\n" for _ in range(3000)] + ["\n"] * 500
    for _ in range(20):
        old = lines[:]
        chooser.shuffle(old)
        new = [line for line in old if chooser.random() > 0.1]
        for _ in range(100):
            new.insert(chooser.randrange(len(new)), f"new {chooser.randrange(1000)}\n")
        before, after = "".join(old), "".join(new)
        assert apply_hunks(before, line_hunks(before, after)) == after


async def test_the_server_answers_cancel_during_a_big_replace_all(
    fake: FakeAnthropic, root: Path
) -> None:
    (root / "big.py").write_text(BIG * 3)
    arguments = {"path": "big.py", "old_text": "value", "new_text": "result", "replace_all": True}
    fake.script(reply(tool_use("edit_file", arguments)), reply(text("not reached")))
    async with editor(root, fake.url) as client:
        _, answer = client.start_task("rename")
        while not any(step["tool"] == "edit_file" for step in client.steps):
            await asyncio.sleep(0.01)
        started = time.monotonic()
        assert await client.command("agent.cancel") == {"cancelled": True}
        assert time.monotonic() - started < 1.0
        assert (await answer)["status"] == "cancelled"
