"""A turn's tool calls: consecutive read-only ones run at once, every other call in its place,
results and progress in the model's order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentls.agent.calls import batches
from agentls.interfaces import Turn
from agentls.tools import TOOLS
from doubles import MemoryEditor, ScriptedModel, make_agent, results, say


class MeetingEditor(MemoryEditor):
    """An editor whose reads of the files in `meet` each wait until all of them are being
    read: were the reads one after another, the first would wait for ever."""

    def __init__(self, root: Path, meet: set[str]) -> None:
        super().__init__(root)
        self.meet = meet
        self.waiting: set[str] = set()
        self.all_there = asyncio.Event()
        self.log: list[str] = []

    async def read_text(self, path: Path) -> str:
        name = path.name
        if name in self.meet:
            self.waiting.add(name)
            if self.waiting == self.meet:
                self.all_there.set()
            await self.all_there.wait()
        text = await super().read_text(path)
        self.log.append(f"read {name}: {text.strip()}")
        return text


def calls(*named: tuple[str, dict[str, Any]]) -> Turn:
    blocks = [
        {"type": "tool_use", "id": f"t{n}", "name": name, "input": arguments}
        for n, (name, arguments) in enumerate(named)
    ]
    return Turn(blocks, "tool_use")


def agent_with(tmp_path: Path, turn: Turn, meet: set[str]) -> tuple[Any, Any, MeetingEditor]:
    model = ScriptedModel(turn, lambda messages: say(str(len(results(messages)))))
    agent, progress = make_agent(tmp_path, model)
    editor = MeetingEditor(tmp_path, meet)
    agent.tools.workspace = editor
    return agent, progress, editor


async def test_two_read_only_calls_overlap_and_answer_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    turn = calls(("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"}))
    agent, progress, _ = agent_with(tmp_path, turn, {"a.txt", "b.txt"})
    result = await asyncio.wait_for(agent.run("read both"), 30)
    assert result.status == "done" and result.summary == "2"
    answers = agent.conversation.messages[-2]["content"]
    assert [(b["tool_use_id"], b["content"]) for b in answers] == [
        ("t0", "1\talpha"),
        ("t1", "1\tbeta"),
    ]
    assert [e for e in progress.events if e[0] in ("step", "done")] == [
        ("step", "read_file", "a.txt"),
        ("done", "read_file", "ok"),
        ("step", "read_file", "b.txt"),
        ("done", "read_file", "ok"),
    ]


async def test_a_command_between_read_only_calls_keeps_its_place(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text("before\n")
    turn = calls(
        ("read_file", {"path": "a.txt"}),
        ("grep", {"pattern": "before"}),
        ("read_file", {"path": "b.txt"}),
        ("bash", {"command": "echo after | tee a.txt b.txt c.txt"}),
        ("read_file", {"path": "c.txt"}),
        ("list_files", {}),
    )
    # a and b are read at the same time (with the grep): neither may see the command's change.
    agent, progress, editor = agent_with(tmp_path, turn, {"a.txt", "b.txt"})
    result = await asyncio.wait_for(agent.run("mixed"), 30)
    assert result.status == "done" and result.summary == "6"
    assert sorted(editor.log[:2]) == ["read a.txt: before", "read b.txt: before"]
    assert editor.log[2:] == ["read c.txt: after"]
    answers = agent.conversation.messages[-2]["content"]
    assert [b["tool_use_id"] for b in answers] == [f"t{n}" for n in range(6)]
    assert "before" in answers[1]["content"] and answers[4]["content"] == "1\tafter"
    steps = [e[1] for e in progress.events if e[0] == "step"]
    assert steps == ["read_file", "grep", "read_file", "bash", "read_file", "list_files"]


def test_only_runs_of_read_only_calls_are_batched() -> None:
    named = ["read_file", "grep", "bash", "list_files", "symbols", "edit_file", "todo_write"]
    cut = batches([{"name": name} for name in named], TOOLS)
    assert [[c["name"] for c in batch] for batch in cut] == [
        ["read_file", "grep"],
        ["bash"],
        ["list_files", "symbols"],
        ["edit_file"],
        ["todo_write"],
    ]
