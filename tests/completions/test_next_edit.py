"""Next edits through the server: the document's recent edits in Zeta's prompt, the model's
rewrite as items on the lines it changes (inlineCompletion) and as Copilot LS's
`textDocument/copilotInlineEdit` result; and no history from a document that may not feed
a prompt."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentls.completions.zeta import CURSOR_MARKER, REGION_END_MARKER, REGION_START_MARKER
from editor_client import EditorClient, editor
from fake_api.completions import FakeCompletions, inline_params
from lsp_text import apply_text_edits
from lsprotocol import types

SOURCE = (
    "def total(items):\n"
    "    count = 0\n"
    "    for item in items:\n"
    "        count += item\n"
    "    return count\n"
)


def zeta_model(path: str, body: dict[str, Any]) -> str:
    """A next-edit model: the editable region with `count` renamed `n` everywhere; a plain
    completion of nothing."""
    if not body.get("raw"):
        return ""
    region = body["prompt"].split(REGION_START_MARKER + "\n", 1)[1]
    region = region.split("\n" + REGION_END_MARKER, 1)[0].replace(CURSOR_MARKER, "")
    return f"{REGION_START_MARKER}\n{region.replace('count', 'n')}\n{REGION_END_MARKER}"


@pytest.fixture
def models() -> Iterator[FakeCompletions]:
    with FakeCompletions(zeta_model) as fake:
        yield fake


def options(models: FakeCompletions) -> dict[str, Any]:
    chosen = {"enabled": True, "model": "ollama/zeta", "baseUrl": models.url, "debounceMs": 0}
    return {"approveCommands": "always", "completions": chosen}


def rename_on_line_1(client: EditorClient, uri: str) -> None:
    client.replace(uri, (1, 4), (1, 9), "n")  # `count = 0` -> `n = 0`


async def test_a_rename_on_line_1_gives_an_item_renaming_on_line_3(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text(SOURCE)
    async with editor(root, models.url, initialization=options(models)) as client:
        uri = client.open(root / "a.py")
        rename_on_line_1(client, uri)
        answer = await client.text_document_inline_completion_async(inline_params(uri, 1, 5))
        text, _ = client.documents[uri]
    items = {item.range.start.line: item for item in answer.items}
    assert set(items) == {3, 4}  # nothing on the cursor's line
    line_3 = items[3]
    assert line_3.insert_text == "        n += item"
    assert line_3.range == types.Range(types.Position(3, 0), types.Position(3, 21))
    edit = types.TextEdit(range=line_3.range, new_text=line_3.insert_text)
    assert apply_text_edits(text, [edit], "utf-16").splitlines()[3] == "        n += item"
    (raw,) = [seen for seen in models.requests if seen.body.get("raw")]
    prompt = raw.body["prompt"]
    assert 'User edited "a.py"' in prompt
    assert "-    count = 0\n+    n = 0" in prompt
    assert f"    n{CURSOR_MARKER} = 0" in prompt
    assert raw.path == "/api/generate" and raw.body["options"]["stop"] == [REGION_END_MARKER]


async def test_the_same_next_edit_through_copilot_inline_edit(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text(SOURCE)
    async with editor(root, models.url, initialization=options(models)) as client:
        uri = client.open(root / "a.py")
        rename_on_line_1(client, uri)
        _, version = client.documents[uri]
        asked = {
            "textDocument": {"uri": uri, "version": version},
            "position": {"line": 1, "character": 5},
        }
        answer = await asyncio.wrap_future(
            client.protocol.send_request("textDocument/copilotInlineEdit", asked)
        )
        stale = dict(asked, textDocument={"uri": uri, "version": version - 1})
        old = await asyncio.wrap_future(
            client.protocol.send_request("textDocument/copilotInlineEdit", stale)
        )
    edits = {edit.range.start.line: edit for edit in answer.edits}
    assert edits[3].text == "        n += item"
    assert (edits[3].range.end.line, edits[3].range.end.character) == (3, 21)
    assert edits[3].textDocument.uri == uri and edits[3].textDocument.version == version
    assert list(old.edits) == []  # an edit for an older version is never offered
    # Only next edits were asked for: no completion call.
    assert all(seen.body.get("raw") for seen in models.requests)


async def test_edits_of_a_secret_file_leave_no_history(root: Path, models: FakeCompletions) -> None:
    (root / ".env").write_text("count = 0\nother = 1\n")
    (root / "a.py").write_text(SOURCE)
    async with editor(root, models.url, initialization=options(models)) as client:
        secret = client.open(root / ".env")
        client.replace(secret, (0, 0), (0, 5), "renamed_secret_word")
        uri = client.open(root / "a.py")
        answer = await client.text_document_inline_completion_async(inline_params(uri, 1, 5))
    assert list(answer.items) == []
    # No edits of its own: a.py asks no next edit, and .env's never reach a prompt.
    assert not any(seen.body.get("raw") for seen in models.requests)
    for seen in models.requests:
        assert "renamed_secret_word" not in str(seen.body)
