"""What the fake model is scripted to do, and the text it is given, in tests of several folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from doubles import results
from fake_api import FakeAnthropic, reply, text, tool_use

SOURCE = "def greet():\n    return '你好 😀'\n\nvalue = 1\nother = 2\n"
"""A file to edit: characters outside the BMP, so every position encoding counts differently."""


def result_text(body: dict[str, Any]) -> str:
    (result,) = results(body["messages"])
    return result["content"]


def echo_result(body: dict[str, Any]) -> Any:
    """The scripted model ends by repeating what the last tool told it."""
    return reply(text("told: " + result_text(body)))


def edit_then_make_a_file(root: Path, fake: FakeAnthropic) -> None:
    """app.py holds x = 1; the model's task edits it to x = 2 and runs a command that makes
    made.txt, then answers; its next task answers at once."""
    (root / "app.py").write_text("x = 1\n")
    fake.script(
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"})),
        reply(tool_use("bash", {"command": "echo made > made.txt"})),
        reply(text("Changed.")),
        reply(text("Noted.")),
    )
