"""The `agentls>` prompt's keys, in-process: prompt_toolkit reading from a pipe."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from agentls.permissions.modes import MODES
from agentls.terminal import prompt
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput


async def _typed(keys: str, history: list[str]) -> str | None:
    with open(prompt.history_file(), "a") as saved:  # as earlier sessions left it
        saved.writelines(f"\n+{line}\n" for line in history)
    with create_pipe_input() as typing, create_app_session(input=typing, output=DummyOutput()):
        typing.send_text(keys)
        # Bounded: keys that leave the prompt waiting must fail the test, not hang it.
        return await asyncio.wait_for(prompt.Prompt().line(), 10)


async def test_enter_accepts_a_ctrl_r_match_and_enter_again_runs_it() -> None:
    line = await _typed("\x12first\r\r", ["the first task", "the second task"])
    assert line == "the first task"


async def test_enter_runs_the_line_and_a_trailing_backslash_goes_on() -> None:
    assert await _typed("one \\\rtwo\r", []) == "one \ntwo"


def test_the_docs_list_the_slash_commands_the_prompt_has() -> None:
    """docs/terminal.md's table and the program agree (it once documented `/mode ask|always`
    where the program took `default|acceptEdits|plan`)."""
    docs = (Path(__file__).parents[2] / "docs" / "terminal.md").read_text()
    rows = re.findall(r"^\| `(/\w+)([^`]*)` \|", docs, re.MULTILINE)
    assert [name for name, _ in rows] == list(prompt.COMMANDS)
    (mode_arguments,) = [arguments for name, arguments in rows if name == "/mode"]
    assert mode_arguments.strip(" []").split("\\|") == list(MODES)
    assert prompt.COMMANDS["/mode"].endswith(" | ".join(MODES))
