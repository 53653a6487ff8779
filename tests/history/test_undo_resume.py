"""End to end: undo through the editor, and resuming a session after the server was killed."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsp_pipe import ServerPipe
from pygls.exceptions import JsonRpcException
from scripts import edit_then_make_a_file


def texts(body: dict[str, Any]) -> list[str]:
    return [b["text"] for m in body["messages"] for b in m["content"] if b.get("type") == "text"]


@pytest.mark.parametrize("flavour", ["vscode", "neovim"])
async def test_undo_restores_an_edit_and_removes_a_file_bash_created(
    fake: FakeAnthropic, root: Path, flavour: str
) -> None:
    path = root / "app.py"
    edit_then_make_a_file(root, fake)
    async with editor(root, fake.url, flavour=flavour) as client:
        uri = client.open(path)
        await client.run_task("change x and make a file")
        assert path.read_text() == "x = 2\n" and (root / "made.txt").exists()

        listed = await client.command("agent.checkpoints")
        kinds = [(c["kind"], c["step"]) for c in listed]
        assert kinds == [("step", 2), ("step", 1), ("task", None)]
        assert listed[-1]["task"] == "change x and make a file"
        assert sorted(listed[-1]["files"]) == ["app.py", "made.txt"]

        result = await client.command("agent.undo")
        assert result == {
            "checkpoint": listed[-1]["id"],
            "restored": ["app.py"],
            "removed": ["made.txt"],
            "conflicts": [],
            "declined": [],
            "reasons": {},
            "unrecorded": [],
            "outcome": "undone: 1 file put back, 1 removed",  # in words, and "1 file"
        }
        assert listed[-1]["description"].endswith("; 2 files differ)")
        # The open file changed through the editor, as a reviewable edit.
        assert client.edit_requests[-1].label == "undo: app.py"
        assert client.documents[uri][0] == "x = 1\n" == path.read_text()
        assert not (root / "made.txt").exists()

        await client.run_task("what now?")
    told = texts(fake.requests[-1].body)
    assert any("The user undid the changes" in t and "made.txt" in t for t in told)


async def test_an_undo_after_a_restart_is_told_to_the_session_it_undid(
    fake: FakeAnthropic, root: Path
) -> None:
    edit_then_make_a_file(root, fake)
    async with editor(root, fake.url) as client:
        await client.run_task("change x and make a file")
    async with editor(root, fake.url) as client:
        result = await client.command("agent.undo")
        assert result["removed"] == ["made.txt"]
        [saved] = await client.command("agent.sessions")
        await client.command("agent.resumeSession", {"id": saved["id"]})
        await client.run_task("what now?")
    told = texts(fake.requests[-1].body)
    assert told[0] == "change x and make a file" and told[-1] == "what now?"
    assert any("The user undid the changes" in t for t in told)


async def test_undo_with_nothing_to_undo_and_bad_arguments_are_refused(
    fake: FakeAnthropic, root: Path
) -> None:
    async with editor(root, fake.url) as client:
        with pytest.raises(JsonRpcException, match="no task to undo"):
            await client.command("agent.undo")
        with pytest.raises(JsonRpcException, match="id must be"):
            await client.command("agent.undo", {"id": "1"})
        with pytest.raises(JsonRpcException, match="no saved session"):
            await client.command("agent.resumeSession", {"id": "../x"})


async def test_a_session_resumes_after_the_server_was_killed_mid_step(
    fake: FakeAnthropic, root: Path
) -> None:
    fake.script(
        reply(text("first answer")),
        reply(tool_use("bash", {"command": "touch started; sleep 60"})),
        reply(text("resumed answer")),
    )
    server = await ServerPipe.start(root, fake.url)
    try:
        answer = await server.request("workspace/executeCommand", _task("first task"))
        assert answer["status"] == "done"
        server.send_request("workspace/executeCommand", _task("second task"))
        while not (root / "started").exists():
            await asyncio.sleep(0.02)
    finally:
        server.process.send_signal(signal.SIGKILL)
        await server.process.wait()

    # A new server (in this process: what matters is that it starts from the disk alone).
    async with editor(root, fake.url) as client:
        [saved] = await client.command("agent.sessions")
        assert (saved["title"], saved["tasks"], saved["current"]) == ("first task", 2, False)
        resumed = await client.command("agent.resumeSession", {"id": saved["id"]})
        assert resumed["id"] == saved["id"]
        assert (await client.run_task("third task"))["status"] == "done"
    body = fake.requests[-1].body
    assert texts(body)[:3] == ["first task", "first answer", "second task"]
    assert texts(body)[-1] == "third task"
    calls = [b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_use"]
    assert calls[0]["input"] == {"command": "touch started; sleep 60"}


def _task(task: str) -> dict[str, Any]:
    return {"command": "agent.runTask", "arguments": [{"task": task}]}


LINKS = {
    "a link made": ("ln -s keep.txt link", "link", {"removed": ["link"]}),
    "a file swapped for a link": (
        "rm a.txt && ln -s keep.txt a.txt",
        "a.txt",
        {"restored": ["a.txt"]},
    ),
}


@pytest.mark.parametrize("change", LINKS)
async def test_undo_acts_on_a_link_never_through_it(
    fake: FakeAnthropic, root: Path, change: str
) -> None:
    command, name, outcome = LINKS[change]
    (root / "keep.txt").write_text("the user's\n")
    (root / "a.txt").write_text("a's old text\n")
    fake.script(reply(tool_use("bash", {"command": command})), reply(text("Done.")))
    async with editor(root, fake.url) as client:
        await client.run_task("make a link")
        assert (root / name).is_symlink()
        result = await client.command("agent.undo")
    assert {k: v for k, v in result.items() if v and k not in ("checkpoint", "outcome")} == outcome
    assert (root / "keep.txt").read_text() == "the user's\n"
    assert not (root / "link").exists() and not (root / "link").is_symlink()
    assert not (root / "a.txt").is_symlink() and (root / "a.txt").read_text() == "a's old text\n"
