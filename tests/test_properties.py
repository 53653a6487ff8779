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

from agentls.agent.budget import LoopLimits
from agentls.agent.conversation import Conversation
from agentls.agent.loop import Agent
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
            edit = LspWorkspace(server, self.root).workspace_edit(change, None)  # type: ignore[arg-type]
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


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


async def _edit(document: str, arguments: dict[str, Any]) -> tuple[str, bool, EncodingsEditor]:
    """Run a tool on doc.txt holding `document`; the result, and the editor it proposed to."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "doc.txt").write_bytes(document.encode())
        editor = EncodingsEditor(root)
        name = "edit_file" if "old_text" in arguments else "write_file"
        text, is_error = await run_tool(
            denying(root, editor), name, {"path": "doc.txt", **arguments}
        )
        if not is_error and editor.proposals:
            landed = (root / "doc.txt").read_bytes().decode()
            assert editor.applied == dict.fromkeys(ENCODINGS, landed)
        return text, is_error, editor


def _landed(editor: EncodingsEditor) -> str:
    return editor.applied[ENCODINGS[0]]


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
    if not old_text or old_text == new_text:
        return
    # What the model asked for, but for the line endings the file keeps.
    asked = _lf(document.replace(old_text, new_text))
    arguments = {"old_text": old_text, "new_text": new_text, "replace_all": True}
    text, is_error, editor = await _edit(document, arguments)
    if is_error:
        assert "nothing to change" in text and asked == _lf(document), text
        return
    assert _lf(_landed(editor)) == asked
    if "\r" not in document:
        assert _landed(editor) == document.replace(old_text, new_text)


@examples(100)
@given(document=texts, content=texts)
async def test_write_file_lands_exactly_in_every_encoding(document: str, content: str) -> None:
    text, is_error, editor = await _edit(document, {"content": content})
    assert not is_error, text
    if not editor.proposals:
        assert "already has" in text and _lf(document) == _lf(content)
        return
    assert _lf(_landed(editor)) == _lf(content)
    if "\r" not in document:
        assert _landed(editor) == content


# Files whose lines end in LF or CRLF, mixed, the last maybe without an ending; each line
# starts with its number in brackets, so that any run of whole lines occurs once.
line_texts = st.text(st.sampled_from("ab 中😀\t\x0c"), max_size=4)
mixed_files = st.lists(
    st.tuples(line_texts, st.sampled_from(["\n", "\r\n"])), min_size=1, max_size=8
).map(lambda lines: [(f"<{i}>{text}", end) for i, (text, end) in enumerate(lines)])


@st.composite
def line_edits(draw: st.DrawFn) -> tuple[list[tuple[str, str]], int, int, int]:
    """A file's lines, the run i..j (inclusive) the model's old_text covers, and a line m
    in that run."""
    lines = draw(mixed_files)
    if draw(st.booleans()):
        lines[-1] = (lines[-1][0], "")
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(i, len(lines) - 1))
    return lines, i, j, draw(st.integers(i, j))


@examples(150)
@given(edit=line_edits(), new_line=line_texts, inserted=st.lists(line_texts, max_size=3))
async def test_an_edit_changes_only_the_bytes_of_the_lines_it_replaces(
    edit: tuple[list[tuple[str, str]], int, int, int], new_line: str, inserted: list[str]
) -> None:
    """The model writes what read_file showed it (LF, no CR): the line it changes keeps its
    ending, lines it adds below it take that ending, every other byte stays."""
    lines, i, j, m = edit
    shown = [text for text, _ in lines]
    changed = f"{shown[m]}!{new_line}"
    new = [*shown[i:m], changed, *(f"+{t}" for t in inserted), *shown[m + 1 : j + 1]]
    arguments = {"old_text": "\n".join(shown[i : j + 1]), "new_text": "\n".join(new)}
    text, is_error, editor = await _edit("".join(t + e for t, e in lines), arguments)
    assert not is_error, text
    ending = lines[m][1] or (lines[m - 1][1] if m else "") or "\n"
    added = "".join(f"+{t}{ending}" for t in inserted)
    if inserted and not lines[m][1]:  # the last line, without an ending: it stays so
        added = "".join(f"{ending}+{t}" for t in inserted)
    expected = [t + e for t, e in lines]
    expected[m] = changed + (lines[m][1] if not inserted or lines[m][1] else "") + added
    assert _landed(editor) == "".join(expected)


@examples(100)
@given(edit=line_edits(), new_line=line_texts)
async def test_write_file_keeps_or_converts_the_line_endings(
    edit: tuple[list[tuple[str, str]], int, int, int], new_line: str
) -> None:
    lines, _, _, m = edit
    document = "".join(t + e for t, e in lines)
    shown = [text for text, _ in lines]
    shown[m] += f"!{new_line}"
    content = "\n".join(shown) + ("\n" if lines[-1][1] else "")
    text, is_error, editor = await _edit(document, {"content": content})
    assert not is_error, text
    expected = [t + e for t, e in lines]
    expected[m] = shown[m] + lines[m][1]
    assert _landed(editor) == "".join(expected)
    assert ("Line endings kept" in text) == ("\r\n" in document)
    for choice, ending in [("lf", "\n"), ("crlf", "\r\n")]:
        text, is_error, editor = await _edit(document, {"content": content, "line_endings": choice})
        assert not is_error, text
        assert _landed(editor) == content.replace("\n", ending)


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
