"""The one line shown under a step, from whatever a tool answered."""

from __future__ import annotations

import json

import pytest
from agentls.tools.result_lines import JSON_LIMIT, TEXT_WIDTH, WIDTH, result_line


@pytest.mark.parametrize(
    ("result", "line"),
    [
        ("exit code 0\nbye", "exit code 0"),
        ("No such file. Do not retry it; ask.", "No such file."),
        (
            json.dumps({"timezone": "UTC", "is_dst": False}, indent=2),
            "timezone: UTC, is_dst: false",
        ),
        (json.dumps({"a": {"b": 1}, "c": [1]}, indent=2), "2 keys"),
        (json.dumps({"only": {}}), "1 key"),
        (json.dumps([1, 2, 3], indent=2), "3 items"),
        (json.dumps({"text": "two\n  lines"}), "text: two lines"),
        ("{\n  not json: here\n}", "not json: here"),
        ("---\n\n# Title\nbody", "# Title"),
        ("", ""),
        ("{", ""),
    ],
)
def test_a_result_reads_as_one_line_of_words(result: str, line: str) -> None:
    assert result_line(result) == line


def test_a_long_json_summary_is_cut_to_a_line() -> None:
    line = result_line(json.dumps({f"key{n}": "v" * 20 for n in range(20)}))
    assert len(line) == WIDTH and line.endswith("…") and line.startswith("key0: vvvv")


def test_json_beyond_the_bound_is_not_parsed_and_its_line_is_cut() -> None:
    line = result_line(json.dumps({"big": "x" * JSON_LIMIT}))
    assert line.startswith('{"big": "xxx') and len(line) == TEXT_WIDTH
