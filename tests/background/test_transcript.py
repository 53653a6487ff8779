"""A background task's log as the transcript every door shows, from a log the model and the
programs wrote: their words shown, never their escape sequences, and a log read bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentls.background import transcript as module
from agentls.background.records import Entry, Status, TaskRecord
from agentls.background.transcript import transcript


def _entry(folder: Path, events: list[object], status: Status | None = None) -> Entry:
    folder.mkdir(exist_ok=True)
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    (folder / "log.jsonl").write_text("".join(line + "\n" for line in lines))
    record = TaskRecord(
        id="3f9c2a1b",
        task="Fix it.\nmore",
        message="",
        root="/r",
        branch="b",
        base="c",
        tree="/t",
        created=0.0,
    )
    done = Status(status="done", steps=2, tokens=1234, cost=0.01)
    return Entry(folder, record, status or done)


def test_the_log_reads_as_what_the_agent_said_and_did(tmp_path: Path) -> None:
    events = [
        {"type": "text", "text": "Looking.\n"},
        {"type": "step", "state": "started", "tool": "agent", "summary": "find x"},
        {
            "type": "subagent",
            "state": "started",
            "agent_type": "Explore",
            "description": "find x",
            "subagent": "agent-1",
        },
        {"type": "step", "state": "started", "tool": "grep", "summary": "x", "subagent": "agent-1"},
        {
            "type": "step",
            "state": "failed",
            "tool": "grep",
            "detail": "no match",
            "subagent": "agent-1",
        },
        {"type": "subagent", "state": "succeeded", "detail": "done", "subagent": "agent-1"},
        {"type": "step", "state": "succeeded", "tool": "agent", "detail": "Explore agent-1: done"},
        {"type": "plan", "items": [{"status": "completed"}, {"status": "pending"}]},
        {"type": "text", "text": "Fixed \x1b[2Jit."},
    ]
    assert transcript(_entry(tmp_path / "t", events)).splitlines() == [
        "Background task 3f9c2a1b: Fix it.",
        "done · 2 steps · 1,234 tokens · $0.0100",
        "",
        "Looking.",
        "▸ agent: find x",
        "⎿ agent-1 Explore: find x",
        "[agent-1] ▸ grep: x",
        "[agent-1]   ✗ no match",
        "⎿ agent-1 ✓ done",
        "  ✓ Explore agent-1: done",
        "plan 1/2",
        "Fixed \\x1b[2Jit.",
    ]


def test_what_is_not_an_event_is_left_out_and_a_long_log_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = json.dumps({"type": "text", "text": "x" * module.LINE_LIMIT})
    events = ["not json", "[1, 2]", huge, {"type": "text", "text": "Kept."}]
    assert transcript(_entry(tmp_path / "t", events)).splitlines()[3:] == ["Kept."]
    many = [{"type": "text", "text": "a line"}] * 20
    entry = _entry(tmp_path / "u", many)
    monkeypatch.setattr(module, "LOG_LIMIT", 100)
    shown = transcript(entry).splitlines()
    assert shown[-1].startswith("(the log goes on") and shown.count("a line") < 5


def test_a_task_without_a_log_says_so(tmp_path: Path) -> None:
    entry = _entry(tmp_path / "t", [], Status(status="queued"))
    (entry.folder / "log.jsonl").unlink()
    assert transcript(entry).splitlines()[1:] == ["queued · 0 steps", "", "(nothing logged yet)"]
