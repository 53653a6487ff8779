"""The session store, and the loop saving as it goes and recording checkpoints."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from agentls.agent.compaction import COMPACTED
from agentls.agent.conversation import Conversation
from agentls.history.checkpoints import ShadowRepository, WorkspaceCheckpoints
from agentls.history.sessions import SessionStore
from agentls.history.undo import undo
from agentls.interfaces import CheckpointMark, Decision
from doubles import Approver, MemoryEditor, ScriptedModel, call, make_agent, say
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture
def store(root: Path, tmp_path: Path) -> SessionStore:
    return SessionStore(root, tmp_path / "sessions")


def test_a_session_is_listed_loaded_and_continued(store: SessionStore) -> None:
    store.create()  # never got a task: not listed
    log = store.create()
    log.task("fix the bug", "fix the bug\nin app.py")
    messages = [{"role": "user", "content": [{"type": "text", "text": "fix the bug"}]}]
    log.sync(messages)
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    log.sync(messages)
    log.sync(messages)  # nothing changed: nothing written

    [info] = store.list_sessions()
    assert (info.id, info.title, info.tasks) == (log.id, "fix the bug", 1)
    assert len(log.path.read_text().splitlines()) == 4
    again, stored = store.open(log.id)
    assert stored.messages == messages and stored.last_request == "fix the bug\nin app.py"
    stored.messages[-1]["content"].append({"type": "text", "text": "more"})
    again.sync(stored.messages)
    assert store.load(log.id).messages[-1]["content"][-1]["text"] == "more"
    assert store.latest() == log.id


def test_files_are_private_and_a_line_cut_by_a_crash_is_skipped(
    store: SessionStore,
) -> None:
    log = store.create()
    log.sync([{"role": "user", "content": [{"type": "text", "text": "one"}]}])
    with open(log.path, "a") as stream:
        stream.write('{"type": "messages", "keep": 0, "app')
    assert store.load(log.id).messages[0]["content"][0]["text"] == "one"
    # Resumed after the crash: the next record is not lost to the cut line.
    again, stored = store.open(log.id)
    stored.messages.append({"role": "assistant", "content": [{"type": "text", "text": "two"}]})
    again.sync(stored.messages)
    assert [m["content"][0]["text"] for m in store.load(log.id).messages] == ["one", "two"]
    assert os.stat(log.path).st_mode & 0o777 == 0o600
    assert os.stat(store.folder).st_mode & 0o777 == 0o700
    assert os.stat(store.folder.parent).st_mode & 0o777 == 0o700


def test_secrets_are_redacted_before_anything_is_written(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-deploy-value")
    log = store.create()
    log.task("use s3cr3t-deploy-value", "use s3cr3t-deploy-value")
    log.sync([{"role": "user", "content": [{"type": "text", "text": 'x "s3cr3t-deploy-value"'}]}])
    text = log.path.read_text()
    assert "s3cr3t" not in text and "[redacted]" in text


def test_unknown_or_crafted_ids_are_refused(store: SessionStore) -> None:
    for bad in ("nope", "../sessions", "", ".hidden"):
        with pytest.raises(KeyError):
            store.load(bad)


async def test_the_loop_saves_each_step_and_a_compaction_rewrites_the_file(
    root: Path, store: SessionStore
) -> None:
    (root / "a.txt").write_text("hello\n")
    log = store.create()
    session = Conversation(journal=log)
    plan = [
        {"content": "read a.txt", "status": "completed"},
        {"content": "fix", "status": "pending"},
    ]
    model = ScriptedModel(
        call("read_file", path="a.txt"),
        # The plan tool may not be offered here: its call in the record is what counts.
        call("todo_write", todos=plan),
        say("read it"),
        say("the summary"),
    )
    agent, _ = make_agent(root, model, session)
    await agent.run("read a.txt", "read a.txt")
    assert store.load(log.id).messages == session.messages
    assert len(session.messages) == 6

    assert (await agent.compact()).status == "done"
    [message] = store.load(log.id).messages
    text = message["content"][0]["text"]
    assert text.startswith(COMPACTED + "the summary")
    assert "Your plan as you last wrote it (todo_write):\n- [completed] read a.txt\n" in text
    assert text.endswith("The user's last request, word for word:\nread a.txt")


async def test_a_task_is_recorded_and_undone_bash_included(
    root: Path, tmp_path: Path, store: SessionStore
) -> None:
    (root / "app.py").write_text("x = 1\n")
    repository = ShadowRepository(root, tmp_path / "shadow")
    model = ScriptedModel(
        call("edit_file", path="app.py", old_text="x = 1", new_text="x = 2"),
        call("bash", command="echo made > made.txt"),
        say("done"),
        say("the summary"),
    )
    session = Conversation(journal=store.create())
    agent, _ = make_agent(root, model, session)
    agent.checkpoints = WorkspaceCheckpoints(repository)
    await agent.run("change things")
    assert (root / "made.txt").exists()
    kinds = [(c.kind, c.step) for c in repository.checkpoints()]
    assert kinds == [("task", None), ("step", 1), ("step", 2), ("end", None)]

    await agent.compact()
    summary = agent.conversation.messages[0]["content"][0]["text"]
    assert "- app.py (modified)\n- made.txt (created)" in summary

    result = await undo(repository, MemoryEditor(root), None, (), session.id, 1)
    assert (root / "app.py").read_text() == "x = 1\n" and not (root / "made.txt").exists()
    assert result.restored == ["app.py"] and result.removed == ["made.txt"]


class SlowCheckpoints:
    """Records in order what the loop asks for; the task's checkpoint takes a while."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.events: list[str] = []

    async def record(self, mark: CheckpointMark) -> None:
        self.events.append(f"{mark.kind} started")
        await asyncio.sleep(0.2 if mark.kind == "task" else 0)
        self.events.append(f"{mark.kind} done, {len(self.model.requests)} requests")

    async def changes_in_session(self, session: str) -> list[str]:
        return []


async def test_the_task_checkpoint_overlaps_the_model_but_precedes_any_change(
    root: Path,
) -> None:
    model = ScriptedModel(call("bash", command="touch made"), say("done"))
    agent, _ = make_agent(root, model, Conversation())
    checkpoints = SlowCheckpoints(model)
    agent.checkpoints = checkpoints
    await agent.run("make it")
    # The model was asked while the task's checkpoint was being recorded, and the command
    # ran only once it was done.
    assert checkpoints.events == [
        "task started",
        "task done, 1 requests",
        "step started",
        "step done, 1 requests",
        "end started",
        "end done, 2 requests",
    ]
    assert (root / "made").exists()


OPERATIONS = st.lists(
    st.sampled_from(["append", "extend", "replace", "rewind", "compact"]), max_size=30
)


@given(operations=OPERATIONS)
def test_what_is_saved_is_always_the_conversation(operations: list[str]) -> None:
    """Whatever the loop does to the conversation (the operations of Session, the context
    budget and compaction), loading the file after a sync gives it back exactly."""
    with tempfile.TemporaryDirectory() as folder:
        _check_saved(Path(folder), operations)


def _check_saved(folder: Path, operations: list[str]) -> None:
    store = SessionStore(folder, folder / "sessions")
    log = store.create()
    messages: list[dict[str, Any]] = []
    for number, operation in enumerate(operations):
        block = {"type": "text", "text": f"{operation} {number}"}
        if operation == "append" or not messages:
            messages.append({"role": "user", "content": [block]})
        elif operation == "extend":
            messages[-1]["content"].append(block)
        elif operation == "replace":  # as the budget shortens an old result
            messages[0]["content"][0] = {**messages[0]["content"][0], "text": "[elided]"}
        elif operation == "rewind":
            del messages[len(messages) // 2 :]
        else:
            messages[:] = [{"role": "user", "content": [block]}]
        log.sync(messages)
        assert store.load(log.id).messages == messages


async def test_an_edit_step_is_recorded_with_the_one_file_it_changes(
    root: Path, tmp_path: Path
) -> None:
    (root / "app.py").write_text("x = 1\n")
    repository = ShadowRepository(root, tmp_path / "shadow")
    model = ScriptedModel(
        call("edit_file", path="./app.py", old_text="x = 1", new_text="x = 2"),
        call("bash", command="true"),
        say("done"),
    )
    agent, _ = make_agent(root, model, Conversation())
    agent.checkpoints = WorkspaceCheckpoints(repository)
    await agent.run("change x")
    steps = [c for c in repository.checkpoints() if c.kind == "step"]
    assert [(c.label, c.touches) for c in steps] == [
        ("edit_file: ./app.py", ["app.py"]),
        ("bash: true", None),
    ]


async def test_a_command_is_recorded_after_its_approval_and_a_denied_one_not_at_all(
    root: Path,
) -> None:
    model = ScriptedModel(
        call("bash", command="touch denied"), call("bash", command="touch allowed"), say("ok")
    )
    agent, _ = make_agent(root, model, Conversation(), approve_commands="ask")
    approver = Approver("deny", "allow")
    agent.tools.approver = approver
    checkpoints = SlowCheckpoints(model)
    agent.checkpoints = checkpoints
    original = approver.approve

    async def approve(command: str, unsandboxed: bool = False) -> Decision:
        checkpoints.events.append(f"asked {command}")
        return await original(command, unsandboxed)

    approver.approve = approve  # type: ignore[method-assign]
    await agent.run("make them")
    assert [e for e in checkpoints.events if not e.startswith(("task", "end"))] == [
        "asked touch denied",
        "asked touch allowed",
        "step started",
        "step done, 2 requests",
    ]
