"""`agentls run`: the terminal front end on the same loop, against the fake API."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

from agentls.cli import main
from agentls.interfaces import SubagentShown
from agentls.shell.sandbox.bubblewrap import no_user_namespaces
from agentls.terminal.screen import Screen
from doubles import BROKEN_BWRAP, path_with_a_broken_bwrap, running_argv, unique_seconds
from fake_api import FakeAnthropic, reply, text, tool_use
from pictures import png
from rich.console import Console
from scripts import edit_then_make_a_file


def _env(
    root: Path, fake: FakeAnthropic, key: str = "test-key", url: str | None = None
) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_BASE_URL": url or fake.url,
        "ANTHROPIC_API_KEY": key,
        "XDG_CONFIG_HOME": str(root / ".config"),
        "NO_COLOR": "1",
    }


def agentls(
    root: Path,
    fake: FakeAnthropic,
    *arguments: str,
    stdin: str = "",
    key: str = "test-key",
    url: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`agentls ARGUMENTS` in ROOT through main() in this process, `stdin` typed on a pipe;
    what only a process shows (Ctrl-C, a closed stdin) is tested on one below."""
    read_end, write_end = os.pipe()
    os.write(write_end, stdin.encode())  # a few answers: within the pipe's buffer
    os.close(write_end)
    out, err = io.StringIO(), io.StringIO()
    started_in = Path.cwd()
    with (
        open(read_end, encoding="utf-8") as typed,
        mock.patch.dict(os.environ, _env(root, fake, key, url)),
        mock.patch.object(sys, "stdin", typed),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        os.chdir(root)
        try:
            status = main(list(arguments))
        except SystemExit as exited:
            status = exited.code if isinstance(exited.code, int) else 1
        finally:
            os.chdir(started_in)
    command = ["agentls", *arguments]
    return subprocess.CompletedProcess(command, status, out.getvalue(), err.getvalue())


def run(
    root: Path,
    fake: FakeAnthropic,
    *arguments: str,
    stdin: str = "",
    key: str = "test-key",
    url: str | None = None,
) -> subprocess.CompletedProcess[str]:
    return agentls(root, fake, "run", *arguments, stdin=stdin, key=key, url=url)


def test_run_with_yes_applies_edits_and_runs_commands(tmp_path: Path, fake: FakeAnthropic) -> None:
    (tmp_path / "app.py").write_text("print('hello')\n")
    fake.script(
        reply(text("Let me look."), tool_use("read_file", {"path": "app.py"})),
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "hello", "new_text": "bye"})),
        reply(tool_use("bash", {"command": "python3 app.py"})),
        reply(text("Changed the greeting.")),
    )
    done = run(tmp_path, fake, "--yes", "say bye")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "app.py").read_text() == "print('bye')\n"
    out = done.stdout
    assert "Let me look." in out and "Changed the greeting." in out
    assert "▸ edit_file: app.py" in out and "▸ bash: python3 app.py" in out
    assert "-print('hello')\n+print('bye')" in out
    assert "done · 4 steps · 1 edit · " in out
    last = fake.requests[-1].body["messages"][-1]["content"][0]
    assert last["content"] == "exit code 0\nbye"


def test_run_without_yes_asks_and_a_no_keeps_the_file(tmp_path: Path, fake: FakeAnthropic) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    fake.script(
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "1", "new_text": "2"})),
        reply(text("ok")),
    )
    done = run(tmp_path, fake, "change x", stdin="n\n")
    assert done.returncode == 0
    assert "Apply this change to app.py? [y/N]" in done.stdout
    assert (tmp_path / "app.py").read_text() == "x = 1\n"
    assert "done · 2 steps · 0 edits · 1 rejected · " in done.stdout


def test_run_fails_clearly_without_a_key(tmp_path: Path, fake: FakeAnthropic) -> None:
    keyless = run(tmp_path, fake, "--yes", "x", key="", url="https://api.anthropic.invalid")
    assert keyless.returncode == 1
    assert "No Anthropic API key is set. Set ANTHROPIC_API_KEY" in keyless.stdout
    assert fake.requests == []


def test_a_server_on_loopback_is_asked_without_a_key(tmp_path: Path, fake: FakeAnthropic) -> None:
    # A local model's server (llama.cpp's, on 127.0.0.1) wants none: no key to invent.
    fake.script(reply(text("hello from a local model")))
    done = run(tmp_path, fake, "-p", "x", key="")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "hello from a local model\n"
    assert "x-api-key" not in fake.requests[0].headers


def test_run_reports_api_errors(tmp_path: Path, fake: FakeAnthropic) -> None:
    refused = run(tmp_path, fake, "--yes", "x")  # nothing scripted: the fake answers 400
    assert refused.returncode == 1
    assert "failed · " in refused.stdout and "script exhausted" in refused.stdout


def test_ctrl_c_cancels_cleanly(tmp_path: Path, fake: FakeAnthropic) -> None:
    seconds = unique_seconds()
    fake.script(reply(tool_use("bash", {"command": f"touch started; sleep {seconds}"})))
    env = _env(tmp_path, fake)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "run", "--yes", "wait"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not ((tmp_path / "started").exists() and running_argv("sleep", seconds)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "cancelled · " in out
    assert not running_argv("sleep", seconds)
    assert len(fake.requests) == 1


def _start(tmp_path: Path, fake: FakeAnthropic, *arguments: str) -> subprocess.Popen[str]:
    env = _env(tmp_path, fake)
    return subprocess.Popen(
        [sys.executable, "-m", "agentls", "run", *arguments],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _read_until(process: subprocess.Popen[str], marker: str) -> str:
    assert process.stdout is not None
    seen = ""
    deadline = time.monotonic() + 30
    while marker not in seen:
        assert time.monotonic() < deadline, seen
        seen += process.stdout.read(1)
    return seen


def test_ctrl_c_while_asking_on_an_open_pipe(tmp_path: Path, fake: FakeAnthropic) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    fake.script(
        reply(tool_use("edit_file", {"path": "a.txt", "old_text": "one", "new_text": "two"}))
    )
    process = _start(tmp_path, fake, "edit")
    _read_until(process, "[y/N] ")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert (tmp_path / "a.txt").read_text() == "one\n"


def test_a_file_changed_while_asking_is_not_overwritten(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    fake.script(
        reply(tool_use("edit_file", {"path": "a.txt", "old_text": "one", "new_text": "two"})),
        reply(text("ok")),
    )
    process = _start(tmp_path, fake, "edit")
    _read_until(process, "[y/N] ")
    (tmp_path / "a.txt").write_text("one, typed elsewhere\n")
    process.communicate("y\n", timeout=30)
    assert (tmp_path / "a.txt").read_text() == "one, typed elsewhere\n"
    told = fake.requests[-1].body["messages"][-1]["content"][0]
    assert told["is_error"] and "changed on disk meanwhile" in told["content"]


def test_command_output_and_failures_are_shown_to_the_user(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(tool_use("bash", {"command": "seq 1 30; exit 3"})),
        reply(tool_use("bash", {"command": "echo fine"})),
        reply(tool_use("bash", {"command": "touch denied"})),
        reply(text("ok")),
    )
    done = run(tmp_path, fake, "count", stdin="y\ny\nn\n")
    out = done.stdout
    # The tail of the output, under its step; the model got all of it.
    assert "    … 20 more lines\n    21\n" in out and "    30\n" in out
    assert "    1\n" not in out
    assert "  ✗ exit code 3\n" in out
    assert "  ✓ exit code 0\n" in out
    # What the model is told to do about a denial is not for the user.
    assert "  ✗ The user denied this command.\n" in out
    assert "Do not retry it" not in out
    assert "done · 4 steps · 0 edits · " in out


def test_commands_are_asked_in_the_terminal(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.script(
        reply(tool_use("bash", {"command": "touch denied"})),
        reply(tool_use("bash", {"command": "touch allowed"})),
        reply(text("ok")),
    )
    done = run(tmp_path, fake, "make files", stdin="n\ny\n")
    assert done.returncode == 0
    assert "Run `touch denied`? [y]es / [a]ll this task / [N]o" in done.stdout
    assert not (tmp_path / "denied").exists() and (tmp_path / "allowed").exists()
    denied = fake.requests[1].body["messages"][-1]["content"][0]
    assert denied["is_error"] and "denied" in denied["content"]


def test_answers_typed_ahead_on_an_open_pipe_are_kept(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.script(
        reply(tool_use("bash", {"command": "touch first"})),
        reply(tool_use("bash", {"command": "touch second"})),
        reply(text("ok")),
    )
    process = _start(tmp_path, fake, "make files")
    assert process.stdin is not None
    process.stdin.write("y\ny\n")  # both answers at once; the pipe stays open
    process.stdin.flush()
    _read_until(process, "done · ")
    assert (tmp_path / "first").exists() and (tmp_path / "second").exists()
    process.stdin.close()
    assert process.wait(timeout=60) == 0


def test_run_with_stdin_closed(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.script(reply(tool_use("bash", {"command": "touch made"})), reply(text("ok")))
    env = _env(tmp_path, fake)
    done = subprocess.run(
        ["bash", "-c", f"exec {sys.executable} -m agentls run 'make it' <&-"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "made").exists()  # nobody could approve it


def test_undo_from_the_terminal_and_continue_the_session(root: Path, fake: FakeAnthropic) -> None:
    edit_then_make_a_file(root, fake)
    assert run(root, fake, "--yes", "change x").returncode == 0
    assert (root / "made.txt").exists()

    listed = agentls(root, fake, "undo", "--list")
    assert "change x" in listed.stdout and "step 2: bash: echo made > made.txt" in listed.stdout
    assert "undo would touch 1 file)" in listed.stdout  # one file, in words
    undone = agentls(root, fake, "undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert "put back  app.py" in undone.stdout and "removed   made.txt" in undone.stdout
    assert (root / "app.py").read_text() == "x = 1\n" and not (root / "made.txt").exists()

    sessions = agentls(root, fake, "sessions")
    assert "1 task  change x" in sessions.stdout
    assert run(root, fake, "--continue", "--yes", "and now?").returncode == 0
    told = [b.get("text", "") for m in fake.requests[-1].body["messages"] for b in m["content"]]
    assert told[0] == "change x" and told[-1] == "and now?"
    assert any("The user undid" in t for t in told)


def test_undo_after_a_task_that_changed_nothing_offers_the_last_that_did(
    root: Path, fake: FakeAnthropic
) -> None:
    edit_then_make_a_file(root, fake)
    assert run(root, fake, "--yes", "change x").returncode == 0
    fake.script(reply(text("Nothing to change.")))
    assert run(root, fake, "--continue", "--yes", "just look").returncode == 0

    undone = agentls(root, fake, "undo", stdin="y\n")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert "The last task (just look) changed nothing; the last one that did was 'change x'." in (
        undone.stdout
    )
    assert "Nothing to undo" not in undone.stdout
    assert "put back  app.py" in undone.stdout and "removed   made.txt" in undone.stdout
    assert (root / "app.py").read_text() == "x = 1\n" and not (root / "made.txt").exists()


def test_resume_with_an_unknown_id_fails(root: Path, fake: FakeAnthropic) -> None:
    done = run(root, fake, "--resume", "nope", "task")
    assert done.returncode == 1 and "no saved session 'nope'" in done.stdout


def test_without_a_working_sandbox_bash_warns_or_is_refused(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    path = path_with_a_broken_bwrap(tmp_path.parent / f"{tmp_path.name}-bin")
    env = {**_env(tmp_path, fake), "PATH": path}
    # The wheel's bwrap works here: only the broken one on PATH is tried.
    start = (
        "import sys; from agentls.shell.sandbox import bubblewrap;"
        " bubblewrap.programs = lambda: [bubblewrap._found('bwrap')];"
        " from agentls.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    for sandbox, ran in [("required", False), ("auto", True)]:
        fake.script(reply(tool_use("bash", {"command": "touch made"})), reply(text("ok")))
        done = subprocess.run(
            [sys.executable, "-c", start, "run", "--yes", "--sandbox", sandbox, "go"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        reason = no_user_namespaces(BROKEN_BWRAP)
        warning = {
            "required": f'agentls: bash is off: the setting sandbox is "required", and {reason}',
            "auto": f"agentls: bash runs without a sandbox: {reason}",
        }[sandbox]
        assert warning in done.stdout
        assert (tmp_path / "made").exists() == ran
        result = fake.requests[-1].body["messages"][-1]["content"][0]
        assert result.get("is_error", False) != ran


def test_a_step_without_a_summary_shows_no_dangling_colon() -> None:
    stream = io.StringIO()
    Screen(stream).step("todo_write", "")
    assert stream.getvalue() == "\n▸ todo_write\n"


def test_each_running_subagent_has_a_spinner_under_the_tasks() -> None:
    screen = Screen(io.StringIO())
    screen.step("agent", "find x")

    def moving() -> list[str]:
        drawn = io.StringIO()
        Console(file=drawn, width=80, no_color=True).print(screen.moving())
        return [line.rstrip() for line in drawn.getvalue().splitlines()]

    first = screen.subagent(SubagentShown("agent-1", "Explore", "find x", "toolu_1"))
    second = screen.subagent(SubagentShown("agent-2", "Explore", "find y", "toolu_2"))
    first.step("read_file", "app.py")
    # Each its own line, spinner first, under the task's: the step it is at, for how long.
    task, one, two = moving()
    assert task.endswith("agent · 0s")
    assert one.startswith("      ") and one.endswith(" agent-1 · read_file · 0s")
    assert two.startswith("      ") and two.endswith(" agent-2 · thinking · 0s")
    first.step_done("read_file", "app.py", True, "read app.py")
    first.finished(True, "Explore agent-1: done · 2 steps")
    _, left = moving()
    assert left.endswith(" agent-2 · thinking · 0s")
    second.finished(False, "Explore agent-2: cancelled")
    assert len(moving()) == 1
    screen.subagent(SubagentShown("agent-3", "Explore", "find z", "toolu_3"))
    screen.finish()  # cancelled: no spinner of its outlives the task
    assert screen.moving() is None and screen.running_subagents == {}


def test_the_users_settings_file_applies_and_flags_win(tmp_path: Path, fake: FakeAnthropic) -> None:
    config = tmp_path / ".config" / "agentls"
    config.mkdir(parents=True)
    (config / "settings.json").write_text('{"maxSteps": 1, "bogus": 1}')
    fake.script(reply(tool_use("bash", {"command": "true"})), reply(text("not reached")))
    done = run(tmp_path, fake, "--yes", "go")
    assert done.returncode == 2, done.stdout  # step_limit after the file's one step
    assert "unknown setting agentls.bogus is ignored" in done.stderr
    fake.reset()
    fake.script(reply(tool_use("bash", {"command": "true"})), reply(text("two steps")))
    done = run(tmp_path, fake, "--yes", "--max-steps", "2", "go")
    assert done.returncode == 0 and "two steps" in done.stdout


def test_the_undo_question_answered_by_end_of_input_or_ctrl_c(
    root: Path, fake: FakeAnthropic
) -> None:
    edit_then_make_a_file(root, fake)
    assert run(root, fake, "--yes", "change x").returncode == 0
    # End of input is a no, said as such, not Python's "EOF when reading a line".
    declined = agentls(root, fake, "undo")
    assert declined.returncode == 1 and declined.stderr == ""
    assert declined.stdout.endswith("Undo these changes? [y/N] \n")
    # Ctrl-C leaves quietly, as a cancel.
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "undo"],
        cwd=root,
        env=_env(root, fake),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: a test runner's worker may ignore SIGINT, and children inherit it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _read_until(process, "[y/N] ")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert process.stderr is not None and "Traceback" not in process.stderr.read()
    assert (root / "app.py").read_text() == "x = 2\n" and (root / "made.txt").exists()


def test_headless_stream_json_is_one_object_per_line_ending_with_the_outcome(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    fake.script(
        reply(text("Looking."), tool_use("bash", {"command": "echo one; echo two"})),
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "1", "new_text": "2"})),
        reply(text("Done.")),
    )
    done = run(tmp_path, fake, "--yes", "-p", "go", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [event["type"] for event in events]
    assert kinds[-2:] == ["usage", "outcome"] and "edit" in kinds and "output" in kinds
    assert "".join(e["text"] for e in events if e["type"] == "output") == "one\ntwo\n"
    ended = [e for e in events if e["type"] == "step" and e["state"] != "started"]
    assert ended[0]["detail"] == "exit code 0" and ended[0]["result"] == "exit code 0\none\ntwo"
    assert events[-1]["status"] == "done" and events[-1]["summary"] == "Done."
    assert (tmp_path / "app.py").read_text() == "x = 2\n"


def test_headless_without_yes_asks_nobody_and_changes_nothing(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    fake.script(
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "1", "new_text": "2"})),
        reply(tool_use("bash", {"command": "touch made"})),
        reply(text("Could not.")),
    )
    done = run(tmp_path, fake, "-p", "go", "--output-format", "json")
    answer = json.loads(done.stdout)
    assert done.returncode == 0 and answer["status"] == "done"
    assert answer["edits"] == {"applied": 0, "rejected": 1, "partly": 0}
    assert (tmp_path / "app.py").read_text() == "x = 1\n" and not (tmp_path / "made").exists()
    texts = run(tmp_path, fake, "-p", "again")  # text: the answer alone on stdout
    assert texts.returncode == 1 and texts.stdout.endswith("script exhausted\n")
    assert texts.stderr.startswith("failed")  # the outcome line, apart from the answer


def test_headless_yes_beside_a_project_mcp_file_answers_and_says_what_waits(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """L3: `-p --yes` beside a `.mcp.json` was a traceback (HeadlessApprover had no
    approve_project), exit 1, no JSON."""
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tools": {"command": "python3", "args": ["-m", "tools"]}}})
    )
    fake.script(reply(text("Done.")))
    done = run(tmp_path, fake, "-p", "go", "--yes", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["status"] == "done"
    (note,) = answer["notApproved"]
    assert "nobody could" in note and "MCP server tools" in note


def test_headless_yes_never_answers_for_a_permission_rule(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """--yes runs what the default would ask, never a command a deny rule cannot see
    through: it is refused, and the model told why."""
    (tmp_path / "x").write_text("keep\n")
    (tmp_path / ".config" / "agentls").mkdir(parents=True)
    (tmp_path / ".config" / "agentls" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}, "sandbox": "off"})
    )
    code = "python3 -c \"import os; os.remove('x')\""
    fake.script(
        reply(tool_use("bash", {"command": code})),
        reply(tool_use("bash", {"command": "env rm x"})),
        reply(tool_use("bash", {"command": "touch made"})),
        reply(text("Could not.")),
    )
    done = run(tmp_path, fake, "-p", "go", "--yes", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "x").exists() and (tmp_path / "made").exists()
    told = [
        block["content"]
        for request in fake.requests[1:3]
        for block in request.body["messages"][-1]["content"]
        if block["type"] == "tool_result"
    ]
    assert "nobody could approve it" in told[0] and "not a plain command" in told[0]
    assert "Denied by the permission rule Bash(rm:*)" in told[1]


def test_a_subagents_events_name_it_and_the_agent_call_and_the_screen_nests_them(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")

    def script() -> None:
        fake.script(
            reply(
                tool_use(
                    "agent",
                    {"description": "find x", "prompt": "find x", "subagent_type": "Explore"},
                )
            ),
            reply(text("Reading."), tool_use("read_file", {"path": "app.py"})),  # the subagent's
            reply(text("x is at app.py:1")),
            reply(text("Done.")),
        )

    script()
    done = run(tmp_path, fake, "-p", "go", "--output-format", "stream-json")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    call = fake.requests[0].body  # the task's first request offers the agent tool
    assert "agent" in [tool["name"] for tool in call["tools"]]
    (started,) = [e for e in events if e["type"] == "subagent" and e["state"] == "started"]
    assert started["agent_type"] == "Explore" and started["description"] == "find x"
    parent = started["parent_tool_use_id"]
    theirs = [e for e in events if e.get("subagent") == started["subagent"]]
    assert {e["type"] for e in theirs} == {"subagent", "text", "step"}
    assert all(e["parent_tool_use_id"] == parent for e in theirs)
    assert [e["tool"] for e in events if e["type"] == "step" and "subagent" not in e] == [
        "agent"
    ] * 2
    assert events[-1]["usage"]["subagents"][0]["type"] == "Explore"

    script()
    shown = run(tmp_path, fake, "-p", "go", "--output-format", "text")
    assert "Done." in shown.stdout
    assert "1 subagent" in shown.stderr and shown.stderr.startswith("done · 2 steps")

    script()
    screen = run(tmp_path, fake, "--yes", "go")
    lines = screen.stdout.splitlines()
    assert "    ⎿ agent-1 Explore: find x" in lines
    assert "      ▸ read_file: app.py" in lines
    assert "      x is at app.py:1" in lines
    assert [line for line in lines if "✓ Explore agent-1: done · 2 steps" in line] == [
        next(line for line in lines if line.startswith("  ✓ Explore agent-1: done · 2 steps"))
    ]


def _by_subagent(lines: list[str]) -> dict[str, list[str]]:
    """Each subagent's lines, by the `⎿ agent-N` header they sit under."""
    said: dict[str, list[str]] = {}
    speaker = ""
    for line in lines:
        if line.startswith("    ⎿ "):
            speaker = line.split()[1]
        elif line.startswith("      "):
            said.setdefault(speaker, []).append(line.strip())
    return said


def test_two_subagents_at_once_each_speak_under_their_own_name_and_end_once(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """Issue 40, row 6: the first subagent's lines sat under the second's header, and each
    result was printed twice (the subagent's end, then its `agent` step's)."""
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "lib.py").write_text("y = 2\n")
    find = {"subagent_type": "Explore"}
    fake.script(
        reply(
            tool_use("agent", {**find, "description": "find x", "prompt": "find x in app"}),
            tool_use("agent", {**find, "description": "find y", "prompt": "find y in lib"}),
        ),
        reply(text("Done.")),
    )
    for prompt, name in (("find x in app", "app"), ("find y in lib", "lib")):
        fake.script_for(
            prompt,
            reply(text(f"Reading {name}."), tool_use("read_file", {"path": f"{name}.py"})),
            reply(text(f"Found in {name}.py:1")),
        )
    done = run(tmp_path, fake, "--yes", "go")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    said = _by_subagent(lines)
    assert said["agent-1"] == [
        "Reading app.",
        "▸ read_file: app.py",
        "✓ read app.py (1 line)",
        "Found in app.py:1",
    ], done.stdout
    assert said["agent-2"] == [
        "Reading lib.",
        "▸ read_file: lib.py",
        "✓ read lib.py (1 line)",
        "Found in lib.py:1",
    ], done.stdout
    ended = [line for line in lines if "Explore agent-" in line and ": done · " in line]
    assert [line[:26] for line in ended] == [
        "  ✓ Explore agent-1: done ",
        "  ✓ Explore agent-2: done ",
    ]


def test_images_from_i_and_at_mentions_reach_the_model(tmp_path: Path, fake: FakeAnthropic) -> None:
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "a.png").write_bytes(png(20, 10))
    (tmp_path / "b.png").write_bytes(png(30, 10))
    fake.script(reply(text("Both seen.")), reply(text("Third seen.")))
    done = agentls(tmp_path, fake, "run", "-i", "shots/a.png", "-p", "compare with @b.png")
    assert done.returncode == 0 and "Both seen." in done.stdout
    first = fake.requests[0]
    assert [i["where"] for i in first.images] == ["user", "user"]
    sent = [base64.b64decode(i["data"]) for i in first.images]
    assert sent == [(tmp_path / "shots" / "a.png").read_bytes(), (tmp_path / "b.png").read_bytes()]
    # In a conversation, a line's @mention attaches the image to that line's task.
    typed = agentls(tmp_path, fake, "run", stdin="what is in @shots/a.png?\n")
    assert "attached shots/a.png: PNG, 20x10 px" in typed.stdout
    (image,) = fake.requests[-1].images
    assert base64.b64decode(image["data"]) == (tmp_path / "shots" / "a.png").read_bytes()
