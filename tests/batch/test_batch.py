"""`agentls batch` on the local pool, against the fake API (each task's script picked by its
prompt): the tasks file, the journal, retries, resume, Ctrl-C and the budget."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
from pathlib import Path

import pytest
from agentls.batch.journal import Journal
from agentls.batch.limits import InFlight
from agentls.batch.tasks import Task
from agentls.cli import main
from batches import (
    asked,
    branches,
    edit_turns,
    environment,
    hanging,
    journal,
    make_repository,
    prompt,
    script_edits,
    start_batch,
    templates_of,
    wait_for,
    workers_of,
    worktrees,
    write_tasks,
)
from fake_api import FakeAnthropic, reply, text, tool_use


@pytest.fixture
def folder(tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a repository `repo`; the model's variables set for in-process runs."""
    make_repository(tmp_path / "repo")
    for name, value in environment(fake, tmp_path).items():
        monkeypatch.setenv(name, value)
    return tmp_path


def batch(folder: Path, *arguments: str) -> tuple[int, str]:
    """`agentls batch tasks.jsonl -o out ARGUMENTS` in this process: exit status, stderr."""
    err = io.StringIO()
    started_in = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stderr(err):
            status = main(["batch", "tasks.jsonl", "-o", "out", *arguments])
    finally:
        os.chdir(started_in)
    return status, err.getvalue()


def test_six_tasks_on_two_workers(folder: Path, fake: FakeAnthropic) -> None:
    ids = [f"task-{n}" for n in range(1, 7)]
    write_tasks(folder / "tasks.jsonl", ids, test="grep -q 'x = [1-6]' app.py")
    script_edits(fake, ids)
    status, err = batch(folder, "--workers", "2")
    assert status == 0, err
    lines = journal(folder)
    assert sorted(line["id"] for line in lines) == ids
    assert {line["status"] for line in lines} == {"done"}
    assert all(line["test_exit"] == 0 and line["attempt"] == 1 for line in lines)
    repository = folder / "repo"
    assert branches(repository) == {f"agentls/out/{i}": f"x = {n}\n" for n, i in enumerate(ids, 1)}
    assert worktrees(repository) == [str(repository)]  # each task's tree removed
    predictions = [
        json.loads(line) for line in (folder / "out/preds.jsonl").read_text().splitlines()
    ]
    assert [p["instance_id"] for p in predictions] == ids
    for number, prediction in enumerate(predictions, 1):
        assert set(prediction) == {"instance_id", "model_name_or_path", "model_patch"}
        assert f"-x = 0\n+x = {number}\n" in prediction["model_patch"]
        patch = (folder / "out/patches" / f"{prediction['instance_id']}.diff").read_text()
        assert patch == prediction["model_patch"]
    trajectory = json.loads((folder / "out/trajectories/task-1.json").read_text())
    kinds = [event["type"] for event in trajectory["events"]]
    assert "edit" in kinds and kinds[-2:] == ["outcome", "test"]
    summary = (folder / "out/summary.md").read_text()
    assert "| task-6 | done | 2 |" in summary
    # Run again: every id has a final status, nothing runs.
    requests = len(fake.requests)
    assert batch(folder, "--workers", "2")[0] == 0
    assert len(fake.requests) == requests and len(journal(folder)) == 6


def test_a_malformed_line_is_named_and_nothing_runs(folder: Path, fake: FakeAnthropic) -> None:
    good = json.dumps({"id": "a", "repo": "repo", "prompt": "p"})
    (folder / "tasks.jsonl").write_text(
        f"{good}\n{{not json\n"
        + json.dumps({"id": "b", "repo": "repo"})
        + "\n"
        + json.dumps({"id": "c/d", "repo": "repo", "prompt": "p"})
        + f"\n{good}\n"
        + json.dumps({"id": "e", "repo": "repo", "prompt": "p", "promt": "x"})
        + "\n"
    )
    status, err = batch(folder)
    assert status == 2
    assert "tasks.jsonl:2: not JSON" in err
    assert "tasks.jsonl:3: missing prompt" in err
    assert "tasks.jsonl:4: id 'c/d'" in err
    assert "tasks.jsonl:5: duplicate id 'a' (first on line 1)" in err
    assert "tasks.jsonl:6: unknown field promt" in err
    assert "nothing was run" in err
    assert not (folder / "out").exists() and fake.requests == []


def test_a_worker_killed_mid_task_is_retried_and_recorded_once(
    folder: Path, fake: FakeAnthropic
) -> None:
    write_tasks(folder / "tasks.jsonl", ["killed"])
    fake.script_for(prompt("killed"), hanging(), *edit_turns("killed", "7"))
    env = {**environment(fake, folder), "AWS_SECRET_ACCESS_KEY": "not-for-workers"}
    driver = start_batch(folder, env, "--workers", "1")
    try:
        wait_for(lambda: asked(fake, "killed") == 1, what="the task's first request")
        (worker,) = workers_of(driver.pid)
        # Forked from the template, as the launcher made it: the model's variables, no
        # other secret, a private folder of its own as cwd (never OUT/logs on sys.path).
        environ = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
        assert b"ANTHROPIC_API_KEY=test-key" in environ
        assert not [v for v in environ if v.startswith(b"AWS_")]
        assert Path(f"/proc/{worker}/cwd").resolve().name.startswith("agentls-cwd-")
        os.kill(worker, signal.SIGKILL)
        assert driver.wait(120) == 0, driver.stderr.read() if driver.stderr else ""
    finally:
        driver.kill()
    (line,) = journal(folder)
    assert (line["status"], line["retries"], line["attempt"]) == ("done", 1, 1)
    log = (folder / "out/logs/workers.log").read_text()
    assert f"worker {worker} ended (signal 9)" in log
    assert branches(folder / "repo") == {"agentls/out/killed": "x = 7\n"}
    assert worktrees(folder / "repo") == [str(folder / "repo")]


def test_the_workers_template_killed_is_started_again(folder: Path, fake: FakeAnthropic) -> None:
    write_tasks(folder / "tasks.jsonl", ["running", "next"])
    edit = {"path": "app.py", "old_text": "x = 0", "new_text": "x = 1"}
    fake.script_for(prompt("running"), reply(tool_use("edit_file", edit), delay=2), "Done.")
    script_edits(fake, ["unused", "next"])
    driver = start_batch(folder, environment(fake, folder), "--workers", "1", "--fresh-workers")
    try:
        wait_for(lambda: asked(fake, "running") == 1, what="the first task's request")
        (template,) = templates_of(driver.pid)
        os.kill(template, signal.SIGKILL)  # the running worker is a process of its own
        assert driver.wait(120) == 0, driver.stderr.read() if driver.stderr else ""
    finally:
        driver.kill()
    lines = journal(folder)
    assert [(line["id"], line["status"], line["retries"]) for line in lines] == [
        ("running", "done", 0),
        ("next", "done", 0),
    ]


def test_the_driver_killed_then_run_again_runs_only_what_was_unfinished(
    folder: Path, fake: FakeAnthropic
) -> None:
    ids = ["first", "held", "last"]
    write_tasks(folder / "tasks.jsonl", ids)
    fake.script_for(prompt("first"), *edit_turns("first", "1"))
    fake.script_for(prompt("held"), hanging(), *edit_turns("held", "2"))
    fake.script_for(prompt("last"), *edit_turns("last", "3"))
    env = environment(fake, folder)
    driver = start_batch(folder, env, "--workers", "1")
    try:
        wait_for(lambda: asked(fake, "held") == 1, what="the held task's request")
        assert [line["id"] for line in journal(folder)] == ["first"]
        driver.kill()  # SIGKILL: no chance to clean up
        driver.wait()
    finally:
        driver.kill()
    again = start_batch(folder, env, "--workers", "1")
    assert again.wait(120) == 0, again.stderr.read() if again.stderr else ""
    lines = journal(folder)
    assert [(line["id"], line["status"]) for line in lines] == [
        ("first", "done"),
        ("held", "done"),
        ("last", "done"),
    ]
    assert asked(fake, "first") == 2  # its two turns, in the first run only
    assert branches(folder / "repo") == {
        "agentls/out/first": "x = 1\n",
        "agentls/out/held": "x = 2\n",
        "agentls/out/last": "x = 3\n",
    }
    assert worktrees(folder / "repo") == [str(folder / "repo")]


def test_ctrl_c_records_cancelled(folder: Path, fake: FakeAnthropic) -> None:
    write_tasks(folder / "tasks.jsonl", ["stopped", "never"])
    fake.script_for(prompt("stopped"), hanging())
    driver = start_batch(folder, environment(fake, folder), "--workers", "1")
    try:
        wait_for(lambda: asked(fake, "stopped") == 1, what="the task's request")
        driver.send_signal(signal.SIGINT)
        assert driver.wait(60) == 130
    finally:
        driver.kill()
    assert driver.stderr is not None
    # The last line, as rich wrapped it at the pipe's 80 columns.
    last = " ".join(driver.stderr.read().split()).rpartition("agentls batch: ")[2]
    # Issue 40, row 9: the cancelled task counted, and the way to go on said.
    assert "0 done · 0 failed · 1 cancelled · 0 running · 1 left" in last, last
    assert last.endswith(
        "; run the same command again to resume (1 cancelled and 1 not started)"
    ), last
    (line,) = journal(folder)
    assert (line["id"], line["status"]) == ("stopped", "cancelled")
    assert asked(fake, "never") == 0
    latest = Journal(folder / "out/results.jsonl")
    tasks = [Task(id=i, repo="repo", prompt=prompt(i)) for i in ("stopped", "never")]
    assert [t.id for t in latest.to_run(tasks, retry_failed=False)] == ["stopped", "never"]


def test_the_budget_stops_submitting(folder: Path, fake: FakeAnthropic) -> None:
    ids = ["one", "two", "three"]
    write_tasks(folder / "tasks.jsonl", ids)
    script_edits(fake, ids)
    status, err = batch(folder, "--workers", "1", "--budget", "0.001")
    assert status == 1, err
    statuses = [(line["id"], line["status"]) for line in journal(folder)]
    assert statuses == [("one", "done"), ("two", "budget"), ("three", "budget")]
    assert asked(fake, "two") == asked(fake, "three") == 0
    assert "$0.001 was spent" in journal(folder)[1]["error"]


def test_retry_failed_runs_failed_tasks_again(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    journal = Journal(path)
    for task_id, status in [("a", "done"), ("b", "failed"), ("c", "cancelled"), ("d", "error")]:
        journal.record({"id": task_id, "attempt": 1, "status": status})
    journal.close()
    with open(path, "a") as torn:
        torn.write('{"id": "e", "attem')  # a driver killed mid-write
    again = Journal(path)
    tasks = [Task(id=i, repo="r", prompt="p") for i in "abcde"]
    assert [t.id for t in again.to_run(tasks, retry_failed=False)] == ["c", "e"]
    assert [t.id for t in again.to_run(tasks, retry_failed=True)] == ["b", "c", "d", "e"]
    assert again.skipped == [5]
    again.record({"id": "e", "attempt": 1, "status": "done"})
    again.close()
    assert json.loads(path.read_text().splitlines()[-1])["id"] == "e"


def test_a_429_lowers_the_tasks_in_flight_for_a_while() -> None:
    now = [0.0]
    limit = InFlight(8, clock=lambda: now[0])
    assert limit.room(running=3) == 5
    now[0] = 10.0
    limit.rate_limited(retry_after=5)
    assert limit.room(running=0) == 0  # paused for the Retry-After
    now[0] = 15.0
    assert limit.allowed == 4 and limit.room(running=3) == 1
    now[0] = 15.0 + 2 * 30
    assert limit.room(running=0) == 6  # one back per quiet interval


def test_a_subagents_events_are_its_own_and_web_fetch_is_off_with_the_network(
    folder: Path, fake: FakeAnthropic
) -> None:
    """A task's subagent shows in its trajectory as in `agentls run -p`'s stream; web_fetch,
    which reaches the network from agentls's own process, is denied without the network."""
    write_tasks(folder / "tasks.jsonl", ["delegated"])
    look = {"description": "find x", "prompt": "Find where x is set.", "subagent_type": "Explore"}
    fake.script_for(
        prompt("delegated"),
        reply(tool_use("agent", look)),
        reply(tool_use("web_fetch", {"url": "https://example.com/"})),
        *edit_turns("delegated", "5"),
    )
    fake.script_for("Find where x is set.", reply(text("x is set in app.py:1")))
    status, err = batch(folder, "--workers", "1")
    assert status == 0, err
    events = json.loads((folder / "out/trajectories/delegated.json").read_text())["events"]
    (started,) = [e for e in events if e["type"] == "subagent" and e["state"] == "started"]
    assert started["agent_type"] == "Explore" and started["description"] == "find x"
    own = [e for e in events if e.get("subagent") == started["subagent"]]
    assert {e["type"] for e in own} == {"subagent", "text"}
    assert "".join(e["text"] for e in own if e["type"] == "text") == "x is set in app.py:1"
    assert all(e["parent_tool_use_id"] == started["parent_tool_use_id"] for e in own)
    fetched = [e for e in events if e["type"] == "step" and e["tool"] == "web_fetch"][-1]
    assert fetched["state"] == "failed" and "permission rule web_fetch" in fetched["result"]
    assert branches(folder / "repo") == {"agentls/out/delegated": "x = 5\n"}


def test_shared_clones_leave_branches_and_no_worktree(folder: Path, fake: FakeAnthropic) -> None:
    ids = ["one", "two", "three"]
    write_tasks(folder / "tasks.jsonl", ids)
    script_edits(fake, ids)
    status, err = batch(folder, "--workers", "1", "--shared")
    assert status == 0, err
    repository = folder / "repo"
    assert branches(repository) == {f"agentls/out/{i}": f"x = {n}\n" for n, i in enumerate(ids, 1)}
    assert worktrees(repository) == [str(repository)]
    assert not (repository / ".git" / "worktrees").exists() or not any(
        (repository / ".git" / "worktrees").iterdir()
    )
    assert not any((folder / "out" / "worktrees").iterdir())
