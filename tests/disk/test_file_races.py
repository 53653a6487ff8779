"""The disk changing between the check of a path and its use (issue 9, findings 9 and 12)."""

from __future__ import annotations

import contextlib
import io
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentls.disk import files
from agentls.edits import Hunk
from agentls.interfaces import Change
from agentls.terminal.adapters import TerminalWorkspace
from agentls.terminal.answers import Answers
from agentls.terminal.screen import Screen
from agentls.tools import run_tool
from doubles import tool_context as context
from editor_client import editor, without_annotations
from fake_api import FakeAnthropic, reply, tool_use
from scripts import echo_result


def _swap_for_symlink(folder: Path, target: Path) -> None:
    folder.rename(folder.with_name(folder.name + ".moved"))
    folder.symlink_to(target)


class SwappingAnswers(Answers):
    """Says yes, after doing something to the disk while the question was on screen."""

    def __init__(self, during_review: Callable[[], None]) -> None:
        super().__init__(None)
        self.during_review = during_review

    async def line(self) -> str:
        self.during_review()
        return "y"


@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-file"])
async def test_a_folder_swapped_for_a_symlink_during_the_review_is_not_written_through(
    tmp_path: Path, existing: bool
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    if existing:
        (root / "sub" / "f.txt").write_text("old\n")
        (outside / "f.txt").write_text("old\n")
    answers = SwappingAnswers(lambda: _swap_for_symlink(root / "sub", outside))
    workspace = TerminalWorkspace(root, False, Screen(io.StringIO()), answers)
    change = Change(
        path=root / "sub" / "f.txt",
        old_text="old\n" if existing else None,
        new_text="pwned\n",
        hunks=[
            Hunk(
                start=0,
                end=4 if existing else 0,
                text="pwned\n",
                line=1,
                old_line_count=int(existing),
                new_line_count=1,
            )
        ],
        tool="write_file",
    )
    landed = await workspace.propose(change)
    assert not landed.applied and "no longer a folder inside the root" in landed.rejected_reason
    assert sorted(p.name for p in outside.iterdir()) == (["f.txt"] if existing else [])
    if existing:
        assert (outside / "f.txt").read_text() == "old\n"


def test_the_server_write_through_refuses_a_symlinked_folder(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "a").symlink_to(outside)
    with pytest.raises(files.PathChanged):
        files.write_atomic(root, root / "a" / "b" / "new.txt", "x")
    with pytest.raises(files.PathChanged):
        files.read_text(root, root / "a" / "secret.txt")
    assert list(outside.iterdir()) == []


async def test_a_file_swapped_for_a_fifo_after_its_stat_never_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("text\n")
    real_stat = os.stat
    swapped = False

    def stat_then_swap(path: Any, *arguments: Any, **keywords: Any) -> os.stat_result:
        nonlocal swapped
        result = real_stat(path, *arguments, **keywords)
        if not swapped and os.fsdecode(path).endswith("file.txt") and stat.S_ISREG(result.st_mode):
            swapped = True
            target.unlink()
            os.mkfifo(target)
        return result

    def release() -> None:
        """Without the fix the server waits in open() for a writer: be one, late."""
        with contextlib.suppress(OSError):
            os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))

    monkeypatch.setattr(os, "stat", stat_then_swap)
    rescue = threading.Timer(3, release)
    rescue.start()
    started = time.monotonic()
    try:
        text, error = await run_tool(context(tmp_path), "read_file", {"path": "file.txt"})
    finally:
        rescue.cancel()
        monkeypatch.undo()
    assert time.monotonic() - started < 2
    assert swapped and error and "not a regular file" in text


async def test_the_servers_write_through_after_a_swap_during_the_review(
    fake: FakeAnthropic, root: Path
) -> None:
    """The editor applies the edit without writing it (the server writes files it has not
    open); during its review the folder becomes a symlink out of the root."""
    outside = root.parent / "outside"
    outside.mkdir()
    (root / "sub").mkdir()
    fake.script(
        reply(tool_use("write_file", {"path": "sub/new.txt", "content": "pwned\n"})),
        echo_result,
    )
    async with editor(root, fake.url, capabilities=without_annotations) as client:
        client.save = False
        client.on_edit = lambda: _swap_for_symlink(root / "sub", outside)
        result = await client.run_task("write")
    assert list(outside.iterdir()) == []
    assert result["summary"].startswith("told: The edit of sub/new.txt was not applied: it could")
    assert "no longer a folder inside the root" in result["summary"]
