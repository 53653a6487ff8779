"""The user types in a document between the model's read and its edit: the edit is made for
the text the editor holds, or refused, or the difference is shown to the model; whatever the
user typed stays. The real server, a scripted editor and the fake API."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from doubles import results
from editor_client import EditorClient, editor
from fake_api import FakeAnthropic, reply, text, tool_use
from pygls.exceptions import JsonRpcException

SOURCE = "def greet():\n    return 'hi'\n\nvalue = 1\n"
EDIT = {"path": "app.py", "old_text": "value = 1", "new_text": "value = 2"}


def told(fake: FakeAnthropic) -> dict[str, Any]:
    """The tool result the model got last."""
    (result,) = results(fake.requests[-1].body["messages"])
    return result


async def _step_done(client: EditorClient, tool: str) -> None:
    deadline = time.monotonic() + 60
    while not any(s["tool"] == tool and s["state"] == "succeeded" for s in client.steps):
        assert time.monotonic() < deadline, f"{tool} never finished"
        await asyncio.sleep(0.02)


async def _round_trip(client: EditorClient) -> None:
    """Once the server answers, it has handled every message sent before (the didChange)."""
    with pytest.raises(JsonRpcException, match="A task is running"):
        await client.command("agent.newSession")


@pytest.mark.parametrize(
    ("where", "typed"),
    [
        ("elsewhere", SOURCE.replace("'hi'", "'hello'")),
        ("over the text to replace", SOURCE.replace("value = 1", "amount = 1")),
    ],
)
async def test_typing_before_the_edit_is_proposed(
    fake: FakeAnthropic, root: Path, where: str, typed: str
) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    user_typed = threading.Event()

    def edit_once_the_user_typed(body: dict[str, Any]) -> Any:
        user_typed.wait(60)
        return reply(tool_use("edit_file", EDIT))

    fake.script(
        reply(tool_use("read_file", {"path": "app.py"})), edit_once_the_user_typed, text("ok")
    )
    async with editor(root, fake.url) as client:
        uri = client.open(path)
        _, answer = client.start_task("bump the value", uri=uri)
        await _step_done(client, "read_file")
        client.type_text(uri, typed)
        await _round_trip(client)
        user_typed.set()
        result = await answer
        document = client.documents[uri][0]
        if where == "elsewhere":
            # Made for the text the editor holds now, so it applies and keeps the typing.
            (request,) = client.edit_requests
            assert request.edit.document_changes[0].text_document.version == 2
            assert document == typed.replace("value = 1", "value = 2")
            assert told(fake)["content"] == "Edited app.py: 1 hunk accepted."
        else:
            assert client.edit_requests == []
            assert document == typed
            assert told(fake)["is_error"]
            assert told(fake)["content"].startswith("old_text was not found in app.py.")
            assert "Read the file again" in told(fake)["content"]
    assert result["status"] == "done"


@pytest.mark.parametrize("editor_kind", ["refuse", "skip"])
async def test_typing_while_the_edit_is_under_review(
    fake: FakeAnthropic, root: Path, editor_kind: str
) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    typed = "# the user's note\n" + SOURCE
    fake.script(reply(tool_use("edit_file", EDIT)), text("ok"))
    async with editor(root, fake.url) as client:
        client.stale_edits = editor_kind  # type: ignore[assignment]
        client.save = False
        uri = client.open(path)
        client.on_edit = lambda: client.type_text(uri, typed)
        result = await client.run_task("bump the value", uri=uri)
        assert client.documents[uri][0] == typed  # the typing kept, the stale edit not applied
    assert path.read_text() == SOURCE  # the server wrote nothing
    answer = told(fake)
    if editor_kind == "refuse":
        assert answer["is_error"]
        assert answer["content"].startswith("The edit of app.py was not applied:")
        assert "changed (version 2)" in answer["content"]
        assert result["edits"] == {"applied": 0, "rejected": 1, "partly": 0}
    else:
        # Neovim answers `applied: true`; the server sees the text is not what it proposed.
        assert "app.py changed, but not as proposed" in answer["content"]
        assert "+# the user's note" in answer["content"]
        assert "value = 2" not in answer["content"]
