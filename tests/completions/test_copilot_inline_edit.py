"""Line edits as Copilot LS's copilotInlineEdit result, and its params checked."""

from __future__ import annotations

import pytest
from agentls.completions.copilot_inline_edit import (
    InlineEditParams,
    InlineEditParamsError,
    inline_edits,
    parse_params,
)
from agentls.completions.edit_history import EditHistory
from agentls.completions.zeta import LineEdit, line_edits, prompt
from lsprotocol.types import PositionEncodingKind
from pygls.workspace.position_codec import PositionCodec

UTF16 = PositionCodec(PositionEncodingKind.Utf16)
URI = "file:///w/total.py"

BEFORE = "def total(xs):\n    n = 0\n    for x in xs:\n        n += x\n    return n\n"
AFTER = "def total(xs):\n    count = 0\n    for x in xs:\n        n += x\n    return n\n"


def test_a_rename_on_line_one_becomes_an_inline_edit_on_line_three() -> None:
    history = EditHistory()
    history.record(URI, BEFORE, AFTER)
    built = prompt("total.py", AFTER, 1, 9, history.diff(URI, "total.py"))
    assert '### User Edits:\n\nUser edited "total.py":\n```diff\n@@ -1,5 +1,5 @@\n' in built.prompt
    assert "-    n = 0\n+    count = 0\n" in built.prompt
    region = AFTER.replace("n += x", "count += x")
    answer = f"<|editable_region_start|>\n{region}\n<|editable_region_end|>"
    edits = line_edits(built, answer)
    assert edits == [LineEdit(3, "        count += x")]
    result = inline_edits(edits, AFTER, URI, 7, UTF16)
    assert result == {
        "edits": [
            {
                "range": {
                    "start": {"line": 3, "character": 0},
                    "end": {"line": 3, "character": 14},
                },
                "text": "        count += x",
                "textDocument": {"uri": URI, "version": 7},
            }
        ]
    }


@pytest.mark.parametrize(
    ("encoding", "end"),
    [
        (PositionEncodingKind.Utf16, 9),  # é is one unit, each emoji two
        (PositionEncodingKind.Utf8, 14),
        (PositionEncodingKind.Utf32, 7),
    ],
)
def test_ranges_are_in_the_negotiated_encoding(encoding: PositionEncodingKind, end: int) -> None:
    text = "a\nb = 1\né😀😀 = 2\nz"
    result = inline_edits([LineEdit(2, "é😀😀 = 3")], text, URI, 1, PositionCodec(encoding))
    assert result["edits"][0]["range"] == {
        "start": {"line": 2, "character": 0},
        "end": {"line": 2, "character": end},
    }


def test_a_spanning_edit_ends_on_its_last_line_and_stale_edits_are_left_out() -> None:
    text = "a\r\nbé\r\nc"
    result = inline_edits(
        [LineEdit(0, "a", span=2), LineEdit(2, "c", span=2), LineEdit(9, "x")], text, URI, 3, UTF16
    )
    assert [edit["range"] for edit in result["edits"]] == [
        {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 2}}
    ]


def test_params_are_parsed() -> None:
    params = {
        "textDocument": {"uri": URI, "version": 4},
        "position": {"line": 2, "character": 5},
    }
    assert parse_params(params) == InlineEditParams(URI, 4, 2, 5)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (None, "params must be an object"),
        ({"position": {"line": 0, "character": 0}}, "textDocument must be dict"),
        ({"textDocument": {"uri": URI, "version": 1}}, "position must be dict"),
        (
            {"textDocument": {"uri": 3, "version": 1}, "position": {"line": 0, "character": 0}},
            "textDocument.uri must be str",
        ),
        (
            {
                "textDocument": {"uri": URI, "version": True},
                "position": {"line": 0, "character": 0},
            },
            "textDocument.version must be int",
        ),
        (
            {"textDocument": {"uri": URI, "version": 1}, "position": {"line": "0", "character": 0}},
            "position.line must be int",
        ),
        (
            {"textDocument": {"uri": URI, "version": 1}, "position": {"line": -1, "character": 0}},
            "must be >= 0",
        ),
        (
            {"textDocument": {"uri": "", "version": 1}, "position": {"line": 0, "character": 0}},
            "textDocument.uri must be 1 to",
        ),
    ],
)
def test_bad_params_raise_a_clear_error(params: object, message: str) -> None:
    with pytest.raises(InlineEditParamsError, match=message):
        parse_params(params)


def test_inserted_lines_take_the_documents_line_break() -> None:
    edit = [LineEdit(0, "a\nnew")]
    assert inline_edits(edit, "a\r\nb", URI, 1, UTF16)["edits"][0]["text"] == "a\r\nnew"
    assert inline_edits(edit, "a\rb", URI, 1, UTF16)["edits"][0]["text"] == "a\rnew"
    assert inline_edits(edit, "a\nb", URI, 1, UTF16)["edits"][0]["text"] == "a\nnew"
