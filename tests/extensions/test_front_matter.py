"""The front matter of a repository's skills, commands and subagent definitions: parsed
before anyone approved them, so bounded before it is (size, no anchors or aliases, nesting,
scalars only), and off the event loop of a task's start."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from pathlib import Path

import pytest
from agentls.config import project_settings
from agentls.extensions import for_task
from agentls.extensions import front_matter as front_matter_module
from agentls.extensions.agent_definitions import parse
from agentls.extensions.commands import available
from agentls.extensions.for_task import TaskExtensions
from agentls.extensions.front_matter import MAX_CHARS, MAX_FILE_BYTES, front_matter
from agentls.extensions.programs import Programs
from agentls.settings.assembly import Settings
from doubles import Approver
from fake_api import FakeAnthropic, reply, text
from terminal.test_terminal import agentls, run

REFUSED = "the front matter is refused: it uses YAML anchors or aliases"


def laughs(levels: int) -> str:
    """A "billion laughs": each level a list of ten aliases of the one before, so `levels`
    levels stand for 10**levels items in a few hundred bytes."""
    lines = ["name: x", "description: laughs", 'l0: &l0 ["lol","lol","lol","lol","lol"]']
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "---\n" + "\n".join([*lines, f"allowed-tools: *l{levels - 1}"]) + "\n---\nBody\n"


def test_an_alias_bomb_is_refused_before_it_grows() -> None:
    bomb = laughs(9)  # 5 billion items once expanded, 470 bytes written
    assert len(bomb) < 600
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(ValueError, match=REFUSED):
            front_matter(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 1 and peak < 1_000_000


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("tools: " + "[" * 5000 + "\n", "nests more than 4 levels"),
        ("a: {b: {c: {d: 1}}}\n", "nests more than 4 levels"),
        ("name: &n a\n", "anchors or aliases"),
        ("tools: *base\n", "anchors or aliases"),
        ("name: !!python/object/apply:os.system [id]\n", "tag:yaml.org,2002:python/object"),
        ("name: !custom x\n", "the tag !custom"),
        ("description: x\n" * (MAX_CHARS // 10), f"more than the {MAX_CHARS:,} read"),
    ],
)
def test_a_front_matter_too_deep_too_large_or_with_code_tags_is_refused(
    written: str, why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        front_matter(f"---\n{written}---\nBody\n")


def test_fields_are_kept_only_as_scalars_or_lists_of_scalars() -> None:
    fields, body = front_matter(
        "---\nname: a\ndescription: Use when: asked\nmaxTurns: 5\nflag: true\nnone:\n"
        "tools: [Read, Grep]\nmetadata: {author: x}\nnested: [[a]]\nsince: 2024-01-02\n"
        "blob: !!binary aGk=\nbig: " + "9" * 5000 + "\n---\n\nThe body.\n"
    )
    assert fields == {
        "name": "a",
        "description": "Use when: asked",
        "maxTurns": 5,
        "flag": True,
        "none": None,
        "tools": ["Read", "Grep"],
        "since": "2024-01-02",
        "blob": "aGk=",
        "big": "9" * 5000,
    }
    assert body == "The body."


def bombed(project: Path, levels: int = 6) -> None:
    """An alias bomb in each kind of file a repository brings, none of them approved."""
    (project / ".claude" / "skills" / "x").mkdir(parents=True)
    (project / ".claude" / "skills" / "x" / "SKILL.md").write_text(laughs(levels))
    (project / ".claude" / "agents").mkdir()
    (project / ".claude" / "agents" / "x.md").write_text(laughs(levels))
    (project / ".claude" / "commands").mkdir()
    (project / ".claude" / "commands" / "x.md").write_text(laughs(levels))
    (project / ".claude" / "commands" / "huge.md").write_text("x" * (MAX_FILE_BYTES + 1))


def test_alias_bombs_leave_the_task_start_and_agentls_skills_quick_and_say_why(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    bombed(project)
    started = time.monotonic()
    listed = agentls(project, fake, "skills")
    assert listed.returncode == 0, listed.stderr
    skill = project / ".claude" / "skills" / "x" / "SKILL.md"
    command = project / ".claude" / "commands" / "x.md"
    assert f"skipped {skill}: {REFUSED}" in listed.stdout
    assert f"skipped {command}: {REFUSED}" in listed.stdout
    assert f"huge.md is {MAX_FILE_BYTES + 1:,} bytes, more than the" in listed.stdout
    fake.script(reply(text("ok")))
    done = run(project, fake, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert "x.md, which is ignored: " + REFUSED in done.stderr
    assert time.monotonic() - started < 20  # minutes and gigabytes before, on slow machines


async def test_a_task_start_reads_the_projects_files_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # However long reading the repository's skills and commands takes, the event loop
    # (the editor's requests, the other tasks) goes on meanwhile.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    real = for_task.available

    def slow(*arguments: object) -> object:
        time.sleep(0.5)
        return real(*arguments)  # type: ignore[arg-type]

    monkeypatch.setattr(for_task, "available", slow)
    root = tmp_path / "root"
    root.mkdir()
    settings = Settings()
    extensions = TaskExtensions(
        root,
        settings,
        project_settings.load(root),
        (),
        Approver(),
        str,
        lambda _: None,
        programs=Programs.of(root, settings),
    )
    gaps: list[float] = []

    async def ticking() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    ticker = asyncio.ensure_future(ticking())
    try:
        assert await extensions.submitted("hi", True) == ("hi", None)
    finally:
        ticker.cancel()
    assert len(gaps) > 50 and max(gaps) < 0.3


def test_a_subagent_definition_with_aliases_says_why() -> None:
    with pytest.raises(ValueError, match=REFUSED):
        parse(laughs(3), ".claude/agents/x.md")


def test_a_repositorys_front_matter_is_parsed_up_to_a_total_and_the_users_still_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Thousands of skills of 32 kB each would take minutes at every task start.
    monkeypatch.setattr(front_matter_module, "SCAN_CHARS", 12_000)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    padding = "\n".join(f"k{n}: value" for n in range(300))  # about 3,000 characters
    for name in ("a", "b", "c", "d", "e"):
        folder = project / ".agents" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\ndescription: {name}\n{padding}\n---\nBody\n")
    (home / ".agents" / "skills" / "mine").mkdir(parents=True)
    (home / ".agents" / "skills" / "mine" / "SKILL.md").write_text(
        f"---\ndescription: mine\n{padding}\n---\nBody\n"
    )
    shared = available(project, (), None)
    assert sorted(shared.found.skills) == ["a", "b", "c", "mine"]
    assert {s.path.parent.name for s in shared.found.skipped} == {"d", "e"}
    assert all("more than 12,000 characters of front matter" in s.why for s in shared.found.skipped)
