"""A background task's log (`log.jsonl`, its stream-json events) as a transcript a person
reads: what the agent said, each step and how it ended, its subagents' lines marked with
their id, and how the task stands. Every door shows this text (`agentls tasks log`, the
editors' Open Log through `agent.backgroundTaskLog`), none parses the log itself.

The log is the model's and the programs' words: it is read bounded (a line, the file) and
shown through `visible`, so no escape sequence reaches a terminal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..visible import visible
from .records import Entry

LOG_LIMIT = 8 * 1024 * 1024
"""Bytes of a log read: past them the transcript says it stops."""

LINE_LIMIT = 1024 * 1024
"""A longer line (a step's whole output) is not parsed: it is left out."""


def transcript(entry: Entry) -> str:
    """The task's log as lines of text, after a heading with where it stands."""
    lines = [*_heading(entry), ""]
    events, cut = _events(entry.folder / "log.jsonl")
    for event in events:
        lines.extend(_said(event))
    if cut:
        lines.append(f"(the log goes on: only its first {LOG_LIMIT // (1024 * 1024)} MB are shown)")
    elif not events:
        lines.append("(nothing logged yet)")
    return "\n".join(lines) + "\n"


def _heading(entry: Entry) -> list[str]:
    record, status = entry.record, entry.status
    figures = [status.status, f"{status.steps} step" + ("" if status.steps == 1 else "s")]
    if status.tokens:
        figures.append(f"{status.tokens:,} tokens")
    if status.cost:
        figures.append(f"${status.cost:.4f}")
    heading = [f"Background task {record.id}: {visible(record.title, lines=False)}"]
    heading.append(" · ".join(figures))
    if status.error:
        heading.append(f"error: {visible(status.error, lines=False)}")
    return heading


def _events(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The log's events (lines that are not a JSON object are skipped) and whether the
    file was longer than LOG_LIMIT."""
    try:
        with path.open("rb") as log:
            data = log.read(LOG_LIMIT + 1)
    except OSError:
        return [], False
    cut = len(data) > LOG_LIMIT
    return list(_parsed(data[:LOG_LIMIT].splitlines())), cut


def _parsed(lines: list[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if len(line) > LINE_LIMIT:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def _said(event: dict[str, Any]) -> list[str]:
    """The lines an event adds (the log joins a turn's text into one event), a subagent's
    marked with its id."""
    who = event.get("subagent")
    mark = f"[{_line(who)}] " if isinstance(who, str) else ""
    kind = event.get("type")
    lines: list[str] = []
    if kind == "text":
        text = visible(str(event.get("text", ""))).strip()
        lines.extend(mark + line for line in text.splitlines())
    elif kind == "step":
        lines.append(mark + _step(event))
    elif kind == "subagent":
        lines.append(_subagent(event, who))
    elif kind == "plan" and isinstance(event.get("items"), list):
        items = [i for i in event["items"] if isinstance(i, dict)]
        done = sum(item.get("status") == "completed" for item in items)
        lines.append(f"{mark}plan {done}/{len(items)}")
    elif kind == "steered":
        lines.append(f"+ added to the task: {_line(event.get('text'))}")
    return lines


def _step(event: dict[str, Any]) -> str:
    tool, summary = _line(event.get("tool")), _line(event.get("summary"))
    state = event.get("state")
    if state == "started":
        return f"▸ {tool}: {summary}" if summary else f"▸ {tool}"
    return f"  {'✓' if state == 'succeeded' else '✗'} {_line(event.get('detail'))}"


def _subagent(event: dict[str, Any], who: Any) -> str:
    name = _line(who)
    if event.get("state") == "started":
        kind, what = _line(event.get("agent_type")), _line(event.get("description"))
        return f"⎿ {name} {kind}: {what}"
    return (
        f"⎿ {name} {'✓' if event.get('state') == 'succeeded' else '✗'} {_line(event.get('detail'))}"
    )


def _line(value: Any) -> str:
    return visible(str(value) if value is not None else "", lines=False)
