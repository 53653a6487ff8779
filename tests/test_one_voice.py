"""One voice: the same task reads the same in every door. The words of each step and of the
end are the server's (issue 21); each door only shows them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import run

DETAILS = ["read app.py (3 lines)", "1 file matches", "exit code 1", "plan: 1 of 2 done"]


def _script(fake: FakeAnthropic) -> None:
    plan = [{"content": "look", "status": "completed"}, {"content": "fix", "status": "pending"}]
    fake.script(
        reply(tool_use("read_file", {"path": "app.py"})),
        reply(tool_use("grep", {"pattern": "two"})),
        reply(tool_use("bash", {"command": "echo out; exit 1"})),
        reply(tool_use("todo_write", {"todos": plan})),
        reply(text("Looked.")),
    )


async def _over_lsp(root: Path, fake: FakeAnthropic) -> tuple[list[tuple[str, str]], str]:
    async with editor(root, fake.url) as client:
        answer = await client.run_task("look")
    return [(s["state"], s["detail"]) for s in client.steps if s["state"] != "started"], answer[
        "outcome"
    ]


def test_every_door_words_the_same_task_alike(root: Path, fake: FakeAnthropic) -> None:
    (root / "app.py").write_text("one\ntwo\nthree\n")

    _script(fake)
    shown = run(root, fake, "--yes", "look").stdout
    marks = {"✓": "succeeded", "✗": "failed"}
    terminal = [
        (marks[line.strip()[0]], line.strip()[2:])
        for line in shown.splitlines()
        if line.startswith("  ") and line.strip()[:1] in marks
    ]
    terminal_end = next(line for line in shown.splitlines() if line.startswith("done · "))

    _script(fake)
    streamed = run(root, fake, "--yes", "-p", "look", "--output-format", "stream-json")
    events = [json.loads(line) for line in streamed.stdout.splitlines()]
    headless = [(e["state"], e["detail"]) for e in events if e.get("state") in marks.values()]
    headless_end = events[-1]["outcome"]

    _script(fake)
    lsp, lsp_end = asyncio.run(_over_lsp(root, fake))

    expected = list(zip(["succeeded", "succeeded", "failed", "succeeded"], DETAILS, strict=True))
    assert terminal == headless == lsp == expected
    # The same end, up to the tokens (each door's prompt differs by the tools it offers).
    ends = {
        end.partition(" tokens")[0].rpartition(" · ")[0]
        for end in (terminal_end, headless_end, lsp_end)
    }
    assert ends == {"done · 5 steps · 0 edits"}
