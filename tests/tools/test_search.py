"""grep and list_files on ripgrep: their inputs, their bounds, and what they never show."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentls.tools import run_tool
from agentls.tools.search import ripgrep
from agentls.tools.search import tools as search_tools
from agentls.tools.search.results import Found
from doubles import is_running
from doubles import tool_context as context


def test_the_wheels_rg_is_used() -> None:
    assert ripgrep.binary() == str(Path(sys.executable).parent / "rg")


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src/b.py").write_text("import os\n\ndef Main():\n    return os.sep\n")
    (root / "src/a.py").write_text("x = 1\ndef main():\n    pass\n")
    (root / "notes.md").write_text("main notes\n")


async def test_grep_inputs_and_sorted_answers(tmp_path: Path) -> None:
    _tree(tmp_path)
    ctx = context(tmp_path)

    async def grep(**arguments: object) -> str:
        text, error = await run_tool(ctx, "grep", arguments)
        assert not error, text
        return text

    assert await grep(pattern="def main") == "src/a.py:2: def main():"
    assert await grep(pattern="def main", ignore_case=True) == (
        "src/a.py:2: def main():\nsrc/b.py:3: def Main():"
    )
    assert await grep(pattern="main", context=1, glob="*.py") == (
        "src/a.py-1- x = 1\nsrc/a.py:2: def main():\nsrc/a.py-3-     pass"
    )
    assert await grep(pattern="Main|sep", context=1, path="src/b.py") == (
        "src/b.py-2- \nsrc/b.py:3: def Main():\nsrc/b.py:4:     return os.sep"
    )
    assert await grep(pattern="main", output="files", ignore_case=True) == (
        "notes.md\nsrc/a.py\nsrc/b.py"
    )
    assert await grep(pattern="o", output="count") == (
        "notes.md: 1\nsrc/b.py: 2\n[3 matches in 2 files]"
    )
    text, error = await run_tool(ctx, "grep", {"pattern": "x", "output": "lines"})
    assert error and "content" in text
    text, error = await run_tool(ctx, "grep", {"pattern": "(?<=x)y"})
    assert error and "invalid regular expression" in text

    text, error = await run_tool(ctx, "list_files", {"glob": "*.py"})
    assert (text, error) == ("src/a.py\nsrc/b.py", False)


async def test_caps_say_how_many_matches_in_how_many_files(tmp_path: Path) -> None:
    for n in range(30):
        (tmp_path / f"f{n:02}.txt").write_text("hit\n" * 10)
    text, _ = await run_tool(context(tmp_path), "grep", {"pattern": "hit"})
    lines = text.splitlines()
    assert len(lines) == 201
    assert lines[0] == "f00.txt:1: hit" and lines[199] == "f19.txt:10: hit"
    assert lines[-1] == "[300 matches in 30 files; the first 200 matches shown. Narrow the " + (
        "pattern, path or glob]"
    )


def test_found_shows_the_first_matches_by_path_whatever_the_order() -> None:
    files = [[(f"d/{f:03}", n) for n in range(1, 1 + f % 7)] for f in range(60)]
    expected = [f"{path}:{n}: t" for lines in files for path, n in lines][:25]
    # rg prints each file's lines together and in order, the files in any order.
    random.Random(7).shuffle(files)
    found = Found(keep=25)
    for lines in files:
        for path, number in lines:
            found.add(path, number, True, "t")
    shown, cut = found.render("content", separate_groups=False)
    assert (shown, cut, found.total) == (expected, True, sum(f % 7 for f in range(60)))
    assert len(found._lines) <= 9  # only the first files' lines were kept


async def test_ripgrep_never_runs_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!/bin/sh\ntouch {tmp_path}/git-ran\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    root = tmp_path / "root"
    root.mkdir()
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]\n\tfsmonitor = touch ../fsmonitor-ran\n")
    (root / "a.py").write_text("x\n")
    ctx = context(root)
    assert (await run_tool(ctx, "list_files", {}))[0] == "a.py"
    assert (await run_tool(ctx, "grep", {"pattern": "x"}))[0] == "a.py:1: x"
    assert not (tmp_path / "git-ran").exists() and not (tmp_path / "fsmonitor-ran").exists()


async def test_a_pattern_cannot_tell_what_a_secret_holds(tmp_path: Path) -> None:
    secret = "sk-ant-api03-abcdefghijklmnop"
    pem = "\n".join(
        [
            "-----BEGIN KEY-----",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
            "BKcwggSjAgEAAoIBAQC7",
            "-----END KEY-----",
        ]
    )
    (tmp_path / "config.py").write_text(
        f"KEY = '{secret}'  # api key\nPEM = '''{pem}'''\nPIN = 'x9y8z'\n"
    )
    ctx = context(tmp_path)
    ctx.secrets = (pem, secret, "x9y8z")
    for pattern in ["sk-ant-api03-a", "abcdefg", "MIIEvQ", "BKcwgg", "x9y"]:
        assert await run_tool(ctx, "grep", {"pattern": pattern}) == ("No matches.", False)
        text, _ = await run_tool(ctx, "grep", {"pattern": pattern, "output": "count"})
        assert text == "No matches."
    assert await run_tool(ctx, "grep", {"pattern": "api key"}) == (
        "config.py:1: KEY = '[redacted]'  # api key",
        False,
    )
    text, _ = await run_tool(ctx, "grep", {"pattern": "PEM|END", "context": 1})
    assert "MIIE" not in text and "BKcw" not in text
    assert "config.py:2: PEM = '''[redacted]" in text


async def test_unsaved_editor_text_is_searched_for_open_changed_documents(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "a.py").write_text("on disk\n")
    (tmp_path / "b.py").write_text("same\n")
    (tmp_path / "debug.log").write_text("on disk\n")
    ctx = context(tmp_path)
    ctx.workspace.open[tmp_path / "a.py"] = "typed\nnot saved\n"  # type: ignore[attr-defined]
    ctx.workspace.open[tmp_path / "b.py"] = "same\n"  # type: ignore[attr-defined]
    ctx.workspace.open[tmp_path / "debug.log"] = "typed\n"  # type: ignore[attr-defined]
    assert await run_tool(ctx, "grep", {"pattern": "disk"}) == ("No matches.", False)
    assert await run_tool(ctx, "grep", {"pattern": "typed|same"}) == (
        "a.py:1: typed\nb.py:1: same",
        False,
    )


def _fake_rg(tmp_path: Path) -> Path:
    """An rg that prints one match, then hangs with a child in its group."""
    script = tmp_path / "slow-rg"
    script.write_text(
        "#!/bin/sh\n"
        f"sleep 60 & echo $! > {tmp_path}/child\n"
        "printf './a.txt\\0001:found it\\n'\n"
        "wait\n"
    )
    script.chmod(0o755)
    return script


async def _dies(pid: int) -> None:
    """The process is gone soon: SIGKILLed, it still needs the CPU to exit, which
    a busy machine may give it late."""
    deadline = time.monotonic() + 10
    while is_running(pid):
        assert time.monotonic() < deadline, f"{pid} outlived the kill of its group"
        await asyncio.sleep(0.02)


async def test_the_bound_holds_with_an_honest_partial_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "binary", lambda: str(_fake_rg(tmp_path)))
    monkeypatch.setattr(search_tools, "GREP_SECONDS", 0.5)
    started = time.monotonic()
    text, error = await run_tool(context(tmp_path), "grep", {"pattern": "found"})
    assert time.monotonic() - started < 2
    assert not error
    assert text == (
        "a.txt:1: found it\n[stopped at the 0.5 s bound before every file was searched: "
        "1 match in 1 file so far; narrow the path or glob]"
    )
    await _dies(int((tmp_path / "child").read_text()))


async def test_cancel_kills_ripgreps_group_within_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "binary", lambda: str(_fake_rg(tmp_path)))
    step = asyncio.ensure_future(run_tool(context(tmp_path), "list_files", {}))
    while not (tmp_path / "child").exists() or not (tmp_path / "child").read_text():
        await asyncio.sleep(0.02)
    started = time.monotonic()
    step.cancel()
    with pytest.raises(asyncio.CancelledError):
        await step
    assert time.monotonic() - started < 1
    await _dies(int((tmp_path / "child").read_text()))


async def test_without_ripgrep_python_searches_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "binary", lambda: None)
    _tree(tmp_path)
    ctx = context(tmp_path)
    text, _ = await run_tool(ctx, "grep", {"pattern": "main", "ignore_case": True, "context": 1})
    note, *lines = text.splitlines()
    assert "ripgrep was not found" in note and "ripgrep" not in "".join(lines)
    assert lines == [
        "notes.md:1: main notes",
        "--",
        "src/a.py-1- x = 1",
        "src/a.py:2: def main():",
        "src/a.py-3-     pass",
        "--",
        "src/b.py-2- ",
        "src/b.py:3: def Main():",
        "src/b.py-4-     return os.sep",
    ]
    text, _ = await run_tool(ctx, "list_files", {"glob": "*.py"})
    assert text.splitlines()[1:] == ["src/a.py", "src/b.py"]


async def test_without_ripgrep_a_runaway_pattern_is_stopped_and_the_loop_stays_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "binary", lambda: None)
    monkeypatch.setattr(search_tools, "GREP_SECONDS", 0.5)
    (tmp_path / "a.txt").write_text("a" * 60 + "b\n")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    ticker = asyncio.ensure_future(tick())
    started = time.monotonic()
    text, error = await run_tool(context(tmp_path), "grep", {"pattern": r"(a|aa)+$"})
    ticker.cancel()
    assert not error and "stopped at the 0.5 s bound" in text
    assert time.monotonic() - started < 3
    assert ticks >= 5  # the event loop went on while the pattern ran


# Read rules hold searches too (issue 27, P1b).


def _guarded_tree(root: Path) -> None:
    for name in ("secrets/key.txt", "secrets/deep/key.txt", "sub/secrets/key.txt", ".env",
                 "sub/.env", "app.py", "sub/b.py"):  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"TOKEN in {name}\n")
    (root / "docs").mkdir()
    (root / "docs" / "link.txt").symlink_to("../secrets/key.txt")
    (root / "docs" / "folder").symlink_to("../secrets")


_DENIED = {"deny": ["Read(secrets/**)", "Read(.env)"]}
_SHOWN = ["app.py", "sub/.env", "sub/b.py", "sub/secrets/key.txt"]  # anchored at the root


@pytest.mark.parametrize("with_rg", [True, False])
async def test_read_rules_leave_their_files_out_of_grep_and_list_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_rg: bool
) -> None:
    from agentls.permissions.rules import parse_rules

    _guarded_tree(tmp_path)
    if not with_rg:
        monkeypatch.setattr(ripgrep, "binary", lambda: None)
    ctx = context(tmp_path, permissions=parse_rules(_DENIED))
    found, error = await run_tool(ctx, "grep", {"pattern": "TOKEN", "output": "files"})
    assert not error and found.splitlines()[-len(_SHOWN) :] == _SHOWN, found
    listed, error = await run_tool(ctx, "list_files", {})
    assert not error and listed.splitlines()[-len(_SHOWN) :] == _SHOWN, listed
    content, _ = await run_tool(ctx, "grep", {"pattern": "TOKEN in secrets", "context": 2})
    assert "No matches." in content  # neither the files nor their links
    for path in ("secrets", "secrets/key.txt", "docs/link.txt", "docs/folder", ".env"):
        for tool in ("grep", "list_files"):
            arguments = {"path": path, **({"pattern": "TOKEN"} if tool == "grep" else {})}
            text, error = await run_tool(ctx, tool, arguments)
            assert error and "Denied by the permission rule Read(" in text, (tool, path, text)


async def test_an_ask_read_rule_leaves_its_files_out_and_asks_to_search_them(
    tmp_path: Path,
) -> None:
    from agentls.permissions.rules import parse_rules
    from doubles import Approver

    _guarded_tree(tmp_path)
    approver = Approver("allow")
    ctx = context(tmp_path, approver, permissions=parse_rules({"ask": ["Read(secrets/**)"]}))
    found, _ = await run_tool(ctx, "grep", {"pattern": "TOKEN", "output": "files"})
    assert "secrets/key.txt" not in found.replace("sub/secrets", "") and not approver.asked
    found, error = await run_tool(ctx, "grep", {"pattern": "TOKEN", "path": "secrets"})
    assert not error and "secrets/key.txt" in found and approver.asked == ["grep TOKEN"]


@pytest.mark.parametrize(
    "pattern",
    ["secrets/**", ".env", "**/.env", "*.key", "s*t", "sub/*.py", "a?c", "**/deep/*", "x{y}"],
)
def test_rg_exclusions_hold_at_least_what_the_rule_holds(tmp_path: Path, pattern: str) -> None:
    """ripgrep's globs are gitignore's, the rules' are fnmatch's from the root: the
    exclusion given to rg must leave out every file the rule holds."""
    from agentls.permissions.rules import glob_holds
    from agentls.tools.search.hidden import rg_glob

    names = ["secrets/a", "secrets/deep/b", "sub/secrets/c", ".env", "sub/.env", "a.key",
             "sub/b.key", "salt", "sub/t", "sx/y/t", "sub/x.py", "sub/deep/y.py", "abc",
             "a/c", "deep/z", "q/deep/z", "x{y}", "other.txt"]  # fmt: skip
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    rg = ripgrep.binary()
    assert rg is not None
    listed = subprocess.run(
        [rg, "--no-config", "--files", "--hidden", "--glob", "!" + rg_glob(pattern), "./"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    ).stdout.split()  # fmt: skip
    shown = {name.removeprefix("./") for name in listed}
    held = {name for name in names if glob_holds(pattern, name)}
    assert held and not held & shown, held & shown
    assert "other.txt" in shown
