"""The tools, one by one, against an in-memory editor and a real shell."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from agentls import redaction
from agentls.disk import files
from agentls.disk.files import write_atomic
from agentls.interfaces import Change, Landed
from agentls.shell import subprocess_shell as shell
from agentls.shell.bounded_output import BoundedOutput
from agentls.shell.command_rules import is_allowed
from agentls.tools import run_tool
from doubles import Approver, MemoryEditor, is_running, running_argv, unique_seconds
from doubles import tool_context as context


async def test_read_file_numbers_lines_and_sees_unsaved_text(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("on disk\n")
    ctx = context(tmp_path)
    ctx.workspace.open[tmp_path / "a.py"] = "unsaved 1\nunsaved 2\n"  # type: ignore[attr-defined]
    text, error = await run_tool(ctx, "read_file", {"path": "a.py"})
    assert (text, error) == ("1\tunsaved 1\n2\tunsaved 2", False)


async def test_read_file_pages_long_files(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("".join(f"l{i}\n" for i in range(1, 101)))
    text, _ = await run_tool(
        context(tmp_path), "read_file", {"path": "long.txt", "offset": 10, "limit": 3}
    )
    assert text == "10\tl10\n11\tl11\n12\tl12\n[lines 10-12 of 100; read on with offset=13]"


async def test_read_file_refuses_binary_and_missing(tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"\x00\x01\x02" * 100)
    text, error = await run_tool(context(tmp_path), "read_file", {"path": "blob"})
    assert error and "binary file (300 bytes)" in text
    text, error = await run_tool(context(tmp_path), "read_file", {"path": "nope.txt"})
    assert error and "does not exist" in text
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    text, error = await run_tool(context(tmp_path), "read_file", {"path": "latin1.txt"})
    assert error and "latin1.txt is not UTF-8 text (invalid continuation byte at byte 3)" in text


async def test_read_file_refuses_a_file_too_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_TEXT_BYTES", 100)
    (tmp_path / "big.txt").write_text("x" * 101)
    text, error = await run_tool(context(tmp_path), "read_file", {"path": "big.txt"})
    assert error and "big.txt is 101 bytes, too large to read as text" in text


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "link/secret.txt", "a\0b"])
async def test_paths_outside_the_root_are_refused(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (tmp_path / "outside.txt").write_text("secret")
    (root / "link").symlink_to(outside)
    for tool, arguments in [
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "x"}),
        ("edit_file", {"path": path, "old_text": "secret", "new_text": "x"}),
        ("list_files", {"path": path}),
        ("grep", {"pattern": "secret", "path": path}),
    ]:
        ctx = context(root)
        text, error = await run_tool(ctx, tool, arguments)
        assert error, (tool, text)
        assert "secret" not in text.replace("secret.txt", "")
        assert ctx.workspace.proposals == []  # type: ignore[attr-defined]
    assert (outside / "secret.txt").read_text() == "secret"


async def test_edit_file_needs_a_unique_match(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\ny = 2\nx = 1\n")
    ctx = context(tmp_path)
    text, error = await run_tool(
        ctx, "edit_file", {"path": "f.py", "old_text": "x = 1", "new_text": "x = 3"}
    )
    assert error and "occurs 2 times" in text and "lines 1, 3" in text
    text, error = await run_tool(
        ctx, "edit_file", {"path": "f.py", "old_text": "y = 3", "new_text": "y = 4"}
    )
    assert error and "line 2: y = 2" in text
    text, error = await run_tool(
        ctx,
        "edit_file",
        {"path": "f.py", "old_text": "x = 1", "new_text": "x = 3", "replace_all": True},
    )
    assert not error and "all 2 hunks accepted" in text
    assert (tmp_path / "f.py").read_text() == "x = 3\ny = 2\nx = 3\n"


async def test_edit_file_touches_only_the_changed_lines(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(10000)))
    ctx = context(tmp_path)
    await run_tool(
        ctx, "edit_file", {"path": "big.txt", "old_text": "line 5000\n", "new_text": "changed\n"}
    )
    (hunk,) = ctx.workspace.proposals[0].hunks  # type: ignore[attr-defined]
    assert (hunk.line, hunk.text, hunk.old_line_count) == (5001, "changed\n", 1)


async def test_edit_file_new_lines_get_the_files_crlf(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_bytes(b"def f():\r\n    return 1\r\n")
    text, error = await run_tool(
        context(tmp_path),
        "edit_file",
        {"path": "w.py", "old_text": "return 1", "new_text": "x = 1\n    return x"},
    )
    assert not error, text
    assert (tmp_path / "w.py").read_bytes() == b"def f():\r\n    x = 1\r\n    return x\r\n"


async def test_edit_file_keeps_crlf_line_endings(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    text, error = await run_tool(
        context(tmp_path),
        "edit_file",
        {"path": "w.txt", "old_text": "one\ntwo", "new_text": "1\n2"},
    )
    assert not error, text
    assert (tmp_path / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_file_says_when_the_files_crlf_was_kept_against_its_lf(
    tmp_path: Path,
) -> None:
    """A file mixing both (as two of PSReadLine's commits left one): the replaced lines' CRLF
    is kept for the model's LF lines, and the model is told, as write_file tells it."""
    (tmp_path / "m.ps1").write_bytes(b"one\ntwo\r\nthree\r\nfour\n")
    text, error = await run_tool(
        context(tmp_path),
        "edit_file",
        {"path": "m.ps1", "old_text": "two\nthree", "new_text": "2\n3"},
    )
    assert (tmp_path / "m.ps1").read_bytes() == b"one\n2\r\n3\r\nfour\n"
    assert (text, error) == (
        "Edited m.ps1: 1 hunk accepted.\nLine endings kept: 1 of the lines you wrote end with "
        "CRLF, as in m.ps1, not with LF. To convert a file's line endings, write it with "
        'line_endings "lf" or "crlf".',
        False,
    )


async def test_one_crlf_elsewhere_does_not_turn_the_edited_lines_crlf(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_bytes(b"alpha\nbeta\r\ngamma\ndelta\n")
    text, error = await run_tool(
        context(tmp_path),
        "edit_file",
        {"path": "m.txt", "old_text": "gamma\n", "new_text": "gamma\nGAMMA2\n"},
    )
    assert (text, error) == ("Edited m.txt: 1 hunk accepted.", False)
    assert (tmp_path / "m.txt").read_bytes() == b"alpha\nbeta\r\ngamma\nGAMMA2\ndelta\n"


async def test_write_file_keeps_line_endings_says_so_and_converts_them(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    path.write_bytes(b"# Title\r\n\r\nText\r\n")
    ctx = context(tmp_path)
    same, error = await run_tool(
        ctx, "write_file", {"path": "README.md", "content": "# Title\n\nText\n"}
    )
    assert not error and ctx.workspace.proposals == []  # type: ignore[attr-defined]
    assert same.startswith("README.md already has this content but for line endings, which")
    assert 'line_endings "lf"' in same
    content = "# Title\n\nMore text\n"
    text, error = await run_tool(ctx, "write_file", {"path": "README.md", "content": content})
    assert not error and text.startswith("Edited README.md: 1 hunk accepted.\nLine endings kept: 3")
    assert path.read_bytes() == b"# Title\r\n\r\nMore text\r\n"
    arguments = {"path": "README.md", "content": content, "line_endings": "lf"}
    text, error = await run_tool(ctx, "write_file", arguments)
    assert (text, error) == ("Edited README.md: 1 hunk accepted.", False)
    assert path.read_text() == content
    arguments = {"path": "new.txt", "content": "a\nb\n", "line_endings": "crlf"}
    text, error = await run_tool(ctx, "write_file", arguments)
    assert (text, error) == ("Created new.txt: 1 hunk accepted.", False)
    assert (tmp_path / "new.txt").read_bytes() == b"a\r\nb\r\n"
    text, error = await run_tool(ctx, "write_file", {**arguments, "line_endings": "cr"})
    assert error and text == "write_file: line_endings must be one of keep, lf, crlf"


async def test_an_editor_that_changes_line_endings_is_reported(tmp_path: Path) -> None:
    class LfEditor(MemoryEditor):
        async def propose(self, change: Change) -> Landed:  # as Neovim 0.7 applies newText
            return Landed(True, change.new_text.replace("\r\n", "\n"), on_disk=False)

    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    ctx = replace(context(tmp_path), workspace=LfEditor(tmp_path))
    text, error = await run_tool(
        ctx, "edit_file", {"path": "w.txt", "old_text": "two", "new_text": "2"}
    )
    assert not error
    assert text.startswith(
        "Edited w.txt: 1 hunk accepted, but the editor ended its lines with LF, not with CRLF "
        "as proposed."
    )


# A form feed is no line break for read_file (str.splitlines would make it one): the
# rejected hunk must be named by read_file's line number all the same.
@pytest.mark.parametrize("second", ["b", "\x0cb"], ids=["plain", "form-feed"])
async def test_partly_accepted_edit_is_reported_hunk_by_hunk(tmp_path: Path, second: str) -> None:
    (tmp_path / "f.txt").write_text(f"a\n{second}\nc\nd\ne\nf\n")
    ctx = context(tmp_path)
    ctx.workspace.review = lambda change: [True, False]  # type: ignore[attr-defined]
    text, error = await run_tool(
        ctx, "write_file", {"path": "f.txt", "content": f"A\n{second}\nc\nd\ne\nF\n"}
    )
    assert not error
    assert text.startswith("Edited f.txt: 1 of 2 hunks accepted. Rejected:\n- change of line 6")
    assert (tmp_path / "f.txt").read_text() == f"A\n{second}\nc\nd\ne\nf\n"
    assert (ctx.edits.applied, ctx.edits.rejected) == (1, 0)
    listed, _ = await run_tool(ctx, "read_file", {"path": "f.txt"})
    assert listed.split("\n")[5] == "6\tf"


async def test_a_rejected_hunk_cut_short_shows_no_part_of_a_secret(tmp_path: Path) -> None:
    secret = "sk-ant-" + "Q" * 40
    (tmp_path / "f.txt").write_text("x" * 130 + secret + "y" * 300 + "\nb\nc\nd\ne\nf\n")
    ctx = replace(context(tmp_path), secrets=(secret,))
    ctx.workspace.review = lambda change: [False, True]  # type: ignore[attr-defined]
    text, error = await run_tool(
        ctx,
        "edit_file",
        {"path": "f.txt", "old_text": "y\nb\nc\nd\ne\nf", "new_text": "Y\nb\nc\nd\ne\nF"},
    )
    assert not error and "Rejected:\n- change of line 1" in text
    assert "QQQQ" not in text and "sk-ant" not in text


async def test_rejected_edit_is_an_error_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("keep\n")
    ctx = context(tmp_path)
    ctx.workspace.review = lambda change: [False]  # type: ignore[attr-defined]
    text, error = await run_tool(
        ctx, "edit_file", {"path": "f.txt", "old_text": "keep", "new_text": "lose"}
    )
    assert error and "rejected" in text and "unchanged" in text
    assert (tmp_path / "f.txt").read_text() == "keep\n"
    assert (ctx.edits.applied, ctx.edits.rejected) == (0, 1)


async def test_write_file_creates_a_new_file(tmp_path: Path) -> None:
    text, error = await run_tool(
        context(tmp_path), "write_file", {"path": "pkg/new.py", "content": "print('hi')\n"}
    )
    assert (text, error) == ("Created pkg/new.py: 1 hunk accepted.", False)
    assert (tmp_path / "pkg/new.py").read_text() == "print('hi')\n"


async def test_invalid_input_is_an_observation(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    for name, arguments, expected in [
        ("nope", {}, "unknown tool"),
        ("read_file", {}, "missing the argument(s): path"),
        ("read_file", {"path": 3}, "path must be a string"),
        ("read_file", {"path": "x", "offset": True}, "offset must be a integer"),
        ("read_file", "not an object", "takes an object"),
        ("grep", {"pattern": "("}, "invalid regular expression"),
        ("bash", {"command": "  "}, "command is empty"),
    ]:
        text, error = await run_tool(ctx, name, arguments)
        assert error and expected in text, (name, text)


async def test_bash_runs_in_the_root_without_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "MY_SECRET", "X_API_KEY"]:
        monkeypatch.setenv(name, "hush-" + name)
    monkeypatch.setenv("HARMLESS", "visible")
    text, error = await run_tool(context(tmp_path), "bash", {"command": "pwd; env; exit 3"})
    assert not error
    assert text.startswith(f"exit code 3\n{tmp_path.resolve()}\n")
    assert "HARMLESS=visible" in text and "hush-" not in text


async def test_bash_output_is_cut_in_the_middle(tmp_path: Path) -> None:
    text, _ = await run_tool(
        context(tmp_path, output_limit=1000), "bash", {"command": "seq 1 100000"}
    )
    total = len("".join(f"{n}\n" for n in range(1, 100001)))
    assert len(text) <= 1000
    assert text.startswith("exit code 0\n1\n2\n") and text.endswith("\n100000")
    head, note, tail = text.split("\n[... ", 1)[0], *text.split("\n[... ", 1)[1].split(" ...]\n")
    kept = len(head) - len("exit code 0\n") + len(tail) + 1  # +1: the final newline, stripped
    assert note == f"{total - kept} characters cut from the middle"


async def test_bash_timeout_kills_the_process_group(tmp_path: Path) -> None:
    started = time.monotonic()
    text, error = await run_tool(
        context(tmp_path, bash_timeout=0.5), "bash", {"command": "sleep 30 & echo $! > pid; wait"}
    )
    assert error and "Timed out after 0.5 s" in text
    assert time.monotonic() - started < 3
    pid = int((tmp_path / "pid").read_text())
    await asyncio.sleep(0.1)
    assert not is_running(pid)


async def test_bash_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    job = asyncio.ensure_future(run_tool(ctx, "bash", {"command": "echo $$ > pid; sleep 30"}))
    while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
        await asyncio.sleep(0.02)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    pid = int((tmp_path / "pid").read_text())
    await asyncio.sleep(0.1)
    assert not is_running(pid)


async def test_bash_runs_the_command_as_bash_c_would(tmp_path: Path) -> None:
    command = "echo $0 $#; cat; no-such-command"
    text, _ = await run_tool(context(tmp_path), "bash", {"command": command})
    assert text == "exit code 127\nbash 0\nbash: line 1: no-such-command: command not found"


def test_bash_runs_nothing_when_the_server_dies_before_recording_its_group(
    tmp_path: Path,
) -> None:
    # The server's end of the gate closes without the go, as when it is SIGKILLed.
    gated = subprocess.run(
        ["bash", "-c", shell._GATE, "touch ran"], cwd=tmp_path, stdin=subprocess.DEVNULL
    )
    assert gated.returncode != 0 and not (tmp_path / "ran").exists()


async def test_commands_ask_unless_allowed(tmp_path: Path) -> None:
    approver = Approver("deny", "allow_task")
    ctx = context(tmp_path, approver, approve_commands="ask", allowed_commands=("echo",))
    assert (await run_tool(ctx, "bash", {"command": "echo hi"}))[0] == "exit code 0\nhi"
    text, error = await run_tool(ctx, "bash", {"command": "touch x"})
    assert error and "denied" in text and not (tmp_path / "x").exists()
    await run_tool(ctx, "bash", {"command": "touch y"})
    await run_tool(ctx, "bash", {"command": "touch z"})
    assert approver.asked == ["touch x", "touch y"]
    assert (tmp_path / "z").exists()


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf ~",
        "git status && curl x",
        "git status | sh",
        "git status $(rm x)",
        "git status `rm x`",
        "git status > out",
        "git statusx",
        "git",
        "git status\nrm x",
        "git status & rm x",
        "git status 'unterminated",
        "git status < /etc/passwd",
        "git status (rm x)",
        "git status {rm,x}",
        "git status \\\nrm x",
        "git status\rrm x",
    ],
)
def test_allowed_commands_cannot_be_smuggled(command: str) -> None:
    assert not is_allowed(command, ["git status", "ls"], Path("/work"))


@pytest.mark.parametrize(
    "command",
    [
        "git diff --output=../x",
        "git diff --output ../x",
        "git diff -o x",
        "pytest --junitxml=../x",
        "pytest --junitxml=report.xml",
        "pytest --basetemp=/home",
        "find . -delete",
        "find . -exec rm {} +",
        "find . -fprint ../list",
        "sed -i s/a/b/ file",
        "sed -ni.bak s/a/b/ file",
        "cat /etc/passwd",
        "cat ~/.ssh/id_rsa",
        "cat src/../../x",
        "cat link/secret",
        "git diff --no-index a /etc/shadow",
    ],
)
def test_allowed_prefixes_never_let_through_writes_or_paths_outside(
    command: str, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "link").symlink_to(tmp_path.parent)
    prefixes = ["git diff", "pytest", "find", "sed", "cat"]
    assert not is_allowed(command, prefixes, tmp_path)


async def test_an_allowed_prefix_with_a_writing_option_asks(tmp_path: Path) -> None:
    approver = Approver("deny")
    ctx = context(tmp_path, approver, approve_commands="ask", allowed_commands=("find",))
    (tmp_path / "keep.txt").write_text("x")
    text, error = await run_tool(ctx, "bash", {"command": "find . -name keep.txt -delete"})
    assert error and "denied" in text and (tmp_path / "keep.txt").exists()
    assert approver.asked == ["find . -name keep.txt -delete"]
    text, error = await run_tool(ctx, "bash", {"command": "find . -name keep.txt"})
    assert (text, error) == ("exit code 0\n./keep.txt", False)


def test_allowed_commands_match_word_prefixes() -> None:
    assert is_allowed("git status --short", ["git status"], Path("/work"))
    assert is_allowed("ls", ["ls"], Path("/work"))
    assert is_allowed("pytest -q tests/test_x.py", ["pytest"], Path("/work"))
    assert is_allowed("grep -in main src/", ["grep"], Path("/work"))
    assert is_allowed("git log --oneline -5 -- ./src", ["git log"], Path("/work"))


def test_bounded_output_keeps_head_and_tail() -> None:
    output = BoundedOutput(10)
    for chunk in ["abc", "defgh", "ijklmnop", "qrstuvwxyz"]:
        output.add(chunk)
    assert output.text() == "abcde\n[... 16 characters cut from the middle ...]\nvwxyz"


async def test_list_files_and_grep(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("def main():\n    return 42\n")
    (tmp_path / "README.md").write_text("main docs\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules/junk.js").write_text("main\n")
    ctx = context(tmp_path)
    assert (await run_tool(ctx, "list_files", {}))[0] == "README.md\nsrc/app.py"
    text, _ = await run_tool(ctx, "grep", {"pattern": r"main", "glob": "*.py"})
    assert text == "src/app.py:1: def main():"
    text, _ = await run_tool(ctx, "grep", {"pattern": "nothing here"})
    assert text == "No matches."


async def test_list_files_and_grep_leave_out_what_git_ignores(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build/out.py").write_text("main\n")
    (tmp_path / "debug.log").write_text("main\n")
    (tmp_path / "app.py").write_text("main\n")
    (tmp_path / ".git/notes.txt").write_text("main\n")  # git's metadata: never searched
    ctx = context(tmp_path)
    assert (await run_tool(ctx, "list_files", {}))[0] == ".gitignore\napp.py"
    assert (await run_tool(ctx, "grep", {"pattern": "main", "glob": "*.txt"}))[0] == "No matches."
    assert (await run_tool(ctx, "grep", {"pattern": "main"}))[0] == "app.py:1: main"


async def test_a_root_reached_through_a_symlink_keeps_the_editors_paths(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.py").write_text("on disk\n")
    root = tmp_path / "link"
    root.symlink_to(real)
    ctx = context(root)
    ctx.workspace.open[root / "a.py"] = "unsaved\n"  # type: ignore[attr-defined]
    assert await run_tool(ctx, "read_file", {"path": "a.py"}) == ("1\tunsaved", False)
    assert await run_tool(ctx, "read_file", {"path": str(root / "a.py")}) == ("1\tunsaved", False)
    assert await run_tool(ctx, "grep", {"pattern": "unsaved"}) == ("a.py:1: unsaved", False)


async def test_symlinks_out_of_the_tree_are_not_searched(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("password=hunter2\n")
    (root / "notes.txt").write_text("password=see vault\n")
    (root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    ctx = context(root)
    assert await run_tool(ctx, "grep", {"pattern": "password"}) == (
        "notes.txt:1: password=see vault",
        False,
    )
    assert (await run_tool(ctx, "list_files", {}))[0] == "notes.txt"


def test_atomic_writes_keep_the_mode_and_leave_no_temporary(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("old\n")
    script.chmod(0o750)
    write_atomic(tmp_path, script, "new\n")
    assert script.read_text() == "new\n" and script.stat().st_mode & 0o777 == 0o750
    write_atomic(tmp_path, tmp_path / "sub" / "fresh.txt", "x")
    assert (tmp_path / "sub" / "fresh.txt").stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["fresh.txt", "run.sh", "sub"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_a_background_job_does_not_hold_the_step(tmp_path: Path) -> None:
    started = time.monotonic()
    text, error = await run_tool(
        context(tmp_path), "bash", {"command": "sleep 30 & echo $! > pid; echo started"}
    )
    assert time.monotonic() - started < 5
    assert not error and text.startswith("exit code 0\nstarted\n[background processes")
    os.kill(int((tmp_path / "pid").read_text()), 9)


async def test_a_runaway_background_writer_does_not_keep_the_server_busy(tmp_path: Path) -> None:
    text, _ = await run_tool(context(tmp_path), "bash", {"command": "yes & echo $! > pid"})
    assert "[background processes still hold the output" in text
    try:
        before = time.process_time()
        await asyncio.sleep(1)
        assert time.process_time() - before < 0.2  # reading `yes` at full speed takes ~1 s
    finally:
        os.kill(int((tmp_path / "pid").read_text()), 9)


@pytest.mark.parametrize("end", ["timeout", "cancel"])
async def test_without_the_sandbox_what_left_the_group_is_killed_too(
    tmp_path: Path, end: str
) -> None:
    seconds = unique_seconds()
    command = f"setsid sleep {seconds} & {sys.executable} -c 'import os; os.setpgid(0, 0); "
    command += f'os.execvp("sleep", ["sleep", "{seconds}"])\' & sleep 60'
    job = asyncio.ensure_future(
        run_tool(context(tmp_path, bash_timeout=2.0), "bash", {"command": command})
    )
    while len(running_argv("sleep", seconds)) < 2:
        assert not job.done(), await job
        await asyncio.sleep(0.02)
    if end == "cancel":
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
    else:
        assert "Timed out" in (await job)[0]
    await asyncio.sleep(0.1)
    assert running_argv("sleep", seconds) == []


def test_a_reused_group_id_is_not_killed() -> None:
    from agentls.shell import guardian
    from agentls.shell.process_groups import ProcessGroups

    unrelated = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        start = guardian.start_time(unrelated.pid)
        assert start is not None
        groups = ProcessGroups()
        # As if a group of ours with that id had ended, and the id gone to this process.
        groups._live[unrelated.pid] = start - 1
        groups.kill_all()
        told = f"+{unrelated.pid} {start - 1}\n"
        subprocess.run([sys.executable, "-I", "-S", guardian.__file__], input=told, text=True)
        assert unrelated.poll() is None
        # The group it was told of, it kills.
        told = f"+{unrelated.pid} {start}\n"
        subprocess.run([sys.executable, "-I", "-S", guardian.__file__], input=told, text=True)
        assert unrelated.wait(5) == -9
    finally:
        unrelated.kill()
        unrelated.wait()


async def test_fifos_are_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "a.txt").write_text("findme\n")
    ctx = context(tmp_path)
    text, error = await asyncio.wait_for(run_tool(ctx, "read_file", {"path": "pipe"}), 5)
    assert error and "not a regular file" in text
    text, _ = await asyncio.wait_for(run_tool(ctx, "grep", {"pattern": "findme"}), 5)
    assert text == "a.txt:1: findme"


def test_secret_variables_by_name_and_by_value() -> None:
    env = {
        "AWS_SECRET_ACCESS_KEY": "x",
        "STRIPE_SECRET_KEY": "x",
        "GH_PAT": "x",
        "DB_PASSWORD": "x",
        "MYSQL_PWD": "x",
        "SSH_PRIVATE_KEY": "x",
        "API_KEY": "x",
        "PRIVATE_KEY": "x",
        "STRIPE_KEY": "x",
        "DB_PASS": "x",
        # A key id more often than a key, but no name tells them apart.
        "GPG_KEY": "ABCDEF",
        "DATABASE_URL": "postgres://admin:hunter2@db/app",
        "REDIS_URL": "redis://:hunter2@cache:6379",
    }
    ordinary = {
        "HOME": "/root",
        "PATH": "/usr/bin",
        "PUBLIC_URL": "https://example.com/app",
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "PWD": "/root",
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/u/gcp.json",
        "STRIPE_PUBLISHABLE_KEY": "pk_test_123",
        "KEYTIMEOUT": "1",
    }
    assert redaction.scrubbed({**env, **ordinary}) == ordinary
    assert redaction.secret_values(env) == (
        "postgres://admin:hunter2@db/app",
        "redis://:hunter2@cache:6379",
        "hunter2",
    )


@pytest.mark.parametrize("limit", [40, 57, 200])
def test_no_part_of_a_secret_survives_at_the_cut(limit: int) -> None:
    secrets = ("sk-ant-0123456789abcdef", "hunter2-longer-password-xyz")
    texts = []
    for shift in range(60):
        for total in (limit - 5, limit + 3, limit + 30, limit * 3):
            body = ("a" * shift + secrets[0] + "b" * 7 + secrets[1]) * 8
            texts.append((body + "c" * total)[-total:] if total < len(body) else body + "c" * total)
    for text in texts:
        for chunk in (1, 7, 1000):
            output = BoundedOutput(limit, secrets)
            for at in range(0, len(text), chunk):
                output.add(text[at : at + chunk])
            shown = output.text()
            for secret in secrets:
                for size in range(6, len(secret) + 1):
                    parts = {secret[i : i + size] for i in range(len(secret) - size + 1)}
                    assert not any(part in shown for part in parts), (shown, secret)


def test_output_just_over_the_limit_keeps_all_it_can() -> None:
    output = BoundedOutput(1000, ("x" * 108,))
    text = "".join(f"line {n:04}\n" for n in range(1, 102))  # 1010 characters
    output.add(text)
    shown = output.text()
    head, rest = shown.split("\n[... ", 1)
    count, tail = rest.split(" characters cut from the middle ...]\n")
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + len(tail) == 1000 and int(count) == 10


async def test_a_redacted_secret_is_never_written_back(tmp_path: Path) -> None:
    secret = "sk-ant-0123456789abcdef"
    (tmp_path / ".env").write_text(f"ANTHROPIC_API_KEY={secret}\nDEBUG=0\n")
    ctx = context(tmp_path)
    ctx.secrets = (secret,)
    shown, _ = await run_tool(ctx, "read_file", {"path": ".env"})
    assert shown == "1\tANTHROPIC_API_KEY=[redacted]\n2\tDEBUG=0"
    text, error = await run_tool(
        ctx, "write_file", {"path": ".env", "content": "ANTHROPIC_API_KEY=[redacted]\nDEBUG=1\n"}
    )
    assert error and "would destroy the secret" in text
    text, error = await run_tool(
        ctx,
        "edit_file",
        {
            "path": ".env",
            "old_text": "KEY=[redacted]\nDEBUG=0",
            "new_text": "KEY=[redacted]\nDEBUG=1",
        },
    )
    assert error and "choose old_text that leaves it out" in text
    text, error = await run_tool(
        ctx, "edit_file", {"path": ".env", "old_text": "DEBUG=0", "new_text": "DEBUG=1"}
    )
    assert not error
    assert (tmp_path / ".env").read_text() == f"ANTHROPIC_API_KEY={secret}\nDEBUG=1\n"


async def test_long_lines_are_cut_after_redaction(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "x" * 40
    (tmp_path / "blob.txt").write_text("A" * 1990 + secret + "\n")
    ctx = context(tmp_path)
    ctx.secrets = (secret,)
    for tool, arguments in [("read_file", {"path": "blob.txt"}), ("grep", {"pattern": "A"})]:
        text, _ = await run_tool(ctx, tool, arguments)
        assert "sk-ant" not in text, tool


async def test_a_background_job_can_still_write_after_its_step(tmp_path: Path) -> None:
    command = "(sleep 1; echo late; echo written > done) & echo started"
    text, _ = await run_tool(context(tmp_path), "bash", {"command": command})
    assert text.startswith("exit code 0\nstarted")
    deadline = time.monotonic() + 30
    while not (tmp_path / "done").exists():
        assert time.monotonic() < deadline, "the job died writing to a closed pipe"
        await asyncio.sleep(0.05)


async def test_each_step_says_what_happened_in_the_users_words(tmp_path: Path) -> None:
    """The model gets the whole result; the user a line of what happened (issue 21)."""
    from agentls.tools import TOOLS, told

    (tmp_path / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    (tmp_path / "b.py").write_text("line 7\n")
    tools = context(tmp_path)
    cases = [
        (
            "read_file",
            {"path": "app.py", "offset": 20, "limit": 41},
            "read app.py (lines 20\u201360 of 100)",
        ),
        ("read_file", {"path": "b.py"}, "read b.py (1 line)"),
        ("grep", {"pattern": "line 7"}, "2 files match"),
        ("grep", {"pattern": "line 77"}, "1 file matches"),
        ("grep", {"pattern": "nowhere"}, "no match"),
        ("grep", {"pattern": "line", "output": "files"}, "2 files match"),
        ("list_files", {}, "2 files"),
        ("todo_write", {"todos": [{"content": "a", "status": "pending"}] * 3}, "plan: 0 of 3 done"),
        ("bash", {"command": "exit 1"}, "exit code 1"),
    ]
    for name, arguments, words in cases:
        result, is_error = await run_tool(tools, name, arguments)
        assert told(TOOLS[name], arguments, result, is_error)[1] == words, (name, result)
    result, is_error = await run_tool(tools, "bash", {"command": "exit 1"})
    assert told(TOOLS["bash"], {"command": "exit 1"}, result, is_error)[0] is False  # ✗
