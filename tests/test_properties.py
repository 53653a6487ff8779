"""Property tests: edits land exactly in every position encoding; no tool input breaks the loop
or reaches outside the workspace root.

Locally every run draws new examples; under CI (the CI variable set) they are derandomized,
so a failure there is reproducible.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agentls.agent.conversation import Conversation
from agentls.agent.loop import Agent, LoopLimits
from agentls.interfaces import Change, Landed, Turn, Usage
from agentls.lsp.workspace import LspWorkspace
from agentls.tools import TOOLS, ToolContext, run_tool
from doubles import MemoryEditor, Recorder, ScriptedModel, say, tool_context
from hypothesis import example, given, settings
from hypothesis import strategies as st
from lsp_text import apply_text_edits
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

ENCODINGS = ("utf-8", "utf-16", "utf-32")


def examples(count: int) -> settings:
    return settings(max_examples=count)


# Pieces that trip position arithmetic: multi-unit characters in UTF-8 and UTF-16, ZWJ
# sequences, combining marks, and every line break LSP counts or does not.
PIECES = [
    "a", "x = 1", " ", "\t", "\n", "\r\n", "\r", "\x0c", "\x0b", "\x85", "\u2028", "\u2029",
    "中", "文字", "😀", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "\U0001d54f",
    "e\u0301", "\u0301", "é",
]  # fmt: skip
# NUL makes a file binary, which the tools refuse to edit by design.
characters = st.characters(codec="utf-8", exclude_characters="\x00")
texts = st.lists(st.sampled_from(PIECES) | st.text(characters, max_size=3), max_size=30).map(
    "".join
)


class EncodingsEditor(MemoryEditor):
    """Builds the WorkspaceEdit the LSP server would send, in each encoding, and applies it
    as a client would; the texts the client ends up with are kept per encoding."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.applied: dict[str, str] = {}

    async def propose(self, change: Change) -> Landed:
        for encoding in ENCODINGS:
            capabilities = types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    workspace_edit=types.WorkspaceEditClientCapabilities(
                        document_changes=True,
                        change_annotation_support=types.ChangeAnnotationsSupportOptions(),
                    )
                )
            )
            server = SimpleNamespace(
                client_capabilities=capabilities,
                workspace=SimpleNamespace(position_codec=PositionCodec(encoding)),
            )
            edit = LspWorkspace(server, self.root, None).workspace_edit(change, None)  # type: ignore[arg-type]
            (document_edit,) = [
                c for c in edit.document_changes or [] if isinstance(c, types.TextDocumentEdit)
            ]
            self.applied[encoding] = apply_text_edits(
                change.old_text or "", list(document_edit.edits), encoding
            )
        return await super().propose(change)


def denying(root: Path, editor: MemoryEditor) -> ToolContext:
    """Every command asks, and the approver denies: random input never runs one."""
    return tool_context(root, workspace=editor, approve_commands="ask")


def _with_file_endings(document: str, snippet: str) -> str:
    """The tools' rule: a file with CRLF endings gets them in new text too."""
    return snippet.replace("\r\n", "\n").replace("\n", "\r\n") if "\r\n" in document else snippet


@examples(150)
@given(document=texts, new_text=texts, data=st.data())
@example(document="a\r\nb\u2028c\r\n", new_text="x\n", data=None)
async def test_edit_file_lands_exactly_in_every_encoding(
    document: str, new_text: str, data: st.DataObject | None
) -> None:
    if data is None:  # the explicit example: replace the middle line's text
        start, end = 3, 6
    else:
        start = data.draw(st.integers(0, max(len(document) - 1, 0)))
        end = data.draw(st.integers(start + 1, max(len(document), start + 1)))
    old_text = document[start:end]
    if not old_text or old_text == _with_file_endings(document, new_text):
        return
    expected = document.replace(old_text, _with_file_endings(document, new_text))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "doc.txt").write_bytes(document.encode())
        editor = EncodingsEditor(root)
        arguments = {"path": "doc.txt", "old_text": old_text, "new_text": new_text}
        text, is_error = await run_tool(
            denying(root, editor), "edit_file", {**arguments, "replace_all": True}
        )
        assert not is_error, text
        assert editor.applied == dict.fromkeys(ENCODINGS, expected)
        assert (root / "doc.txt").read_bytes() == expected.encode()


@examples(100)
@given(document=texts, content=texts)
async def test_write_file_lands_exactly_in_every_encoding(document: str, content: str) -> None:
    expected = _with_file_endings(document, content)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "doc.txt").write_bytes(document.encode())
        editor = EncodingsEditor(root)
        text, is_error = await run_tool(
            denying(root, editor), "write_file", {"path": "doc.txt", "content": content}
        )
        if expected == document:
            assert "already has exactly this content" in text
            return
        assert not is_error, text
        assert editor.applied == dict.fromkeys(ENCODINGS, expected)


OUTSIDE = "outside-the-root-7f3a"
"""The content of the files outside the root: no tool result may ever show it."""

paths = st.sampled_from(
    [
        "a.txt", "./a.txt", "sub/b.txt", "sub", ".", "", " ", "..", "../outside.txt",
        "sub/../../outside.txt", "/etc/passwd", "/", "link/secret.txt", "link", "a\0b", "~",
        "new/deep/file.txt", "中文/😀.txt", "x" * 5000, "a.txt/", "a.txt\n",
    ]
) | st.text(max_size=20)  # fmt: skip
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=30)
    | paths,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=5,
)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, Any]:
    """A tool (or an unknown name) and arguments that may miss, add or mistype fields."""
    name = draw(st.sampled_from([*TOOLS, "no_such_tool"]))
    tool = TOOLS.get(name)
    if tool is None or draw(st.integers(0, 9)) == 0:
        return name, draw(values)
    arguments: dict[str, Any] = {}
    for field, spec in tool.properties.items():
        if draw(st.integers(0, 4)) == 0:
            continue  # missing
        if field == "path":
            arguments[field] = draw(paths)
        elif spec["type"] == "integer" and draw(st.booleans()):
            arguments[field] = draw(st.integers(-(2**70), 2**70))
        else:
            arguments[field] = draw(values | texts)
    if draw(st.integers(0, 9)) == 0:
        arguments[draw(st.text(max_size=8))] = draw(values)
    return name, arguments


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[key] = path.read_bytes()
    return found


@examples(100)
@given(calls=st.lists(tool_calls(), min_size=1, max_size=4))
@example(calls=[("grep", {"pattern": "a", "path": "x" * 5000})])  # a name too long
async def test_no_tool_input_breaks_the_loop_or_leaves_the_root(
    calls: list[tuple[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        top = Path(folder)
        root = top / "root"
        (root / "sub").mkdir(parents=True)
        (root / "a.txt").write_text("alpha\nbeta\n")
        (root / "sub" / "b.txt").write_text("b\r\n")
        (top / "outside.txt").write_text(OUTSIDE)
        (top / "elsewhere").mkdir()
        (top / "elsewhere" / "secret.txt").write_text(OUTSIDE)
        (root / "link").symlink_to(top / "elsewhere")
        outside_before = {k: v for k, v in _snapshot(top).items() if not k.startswith("root")}
        turns = [
            Turn(
                [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": arguments}],
                "tool_use",
                Usage(1, 1),
            )
            for i, (name, arguments) in enumerate(calls)
        ]
        model = ScriptedModel(*turns, say("done"))
        editor = MemoryEditor(root)
        agent = Agent(model, denying(root, editor), Recorder(), Conversation(), LoopLimits())
        result = await agent.run("go")
        assert result.status == "done", result.summary
        told = [
            block
            for message in model.requests[-1]
            if message["role"] == "user"
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        assert len(told) == len(calls)
        for (name, _), block in zip(calls, told, strict=True):
            assert OUTSIDE not in block["content"]
            # The catch-all of run_tool means an exception the tool did not expect.
            assert not block["content"].startswith(f"{name} failed:"), block["content"]
        assert all(change.path.resolve().is_relative_to(root) for change in editor.proposals)
        after = {k: v for k, v in _snapshot(top).items() if not k.startswith("root")}
        assert after == outside_before
