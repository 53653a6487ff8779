"""Skills and commands: found, parsed leniently, approved, in the catalog and the `/` list,
loaded by the skill tool, run as `/name args` through the terminal's `-p` (fake API)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from agentls.extensions import skill_tool
from agentls.extensions.commands import available, substituted
from agentls.extensions.front_matter import front_matter
from agentls.extensions.skills import Found, project_skills, search, tool_list
from agentls.extensions.trust import Trust
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import agentls, run


def skill(base: Path, name: str, description: str = "", body: str = "", **more: str) -> Path:
    folder = base / name
    folder.mkdir(parents=True, exist_ok=True)
    fields = {"name": name, "description": description or f"Use for {name} work.", **more}
    head = "".join(f"{key}: {value}\n" for key, value in fields.items())
    (folder / "SKILL.md").write_text(f"---\n{head}---\n{body or f'The {name} steps.'}\n")
    return folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    return folder


def test_front_matter_is_read_leniently() -> None:
    fields, body = front_matter("---\nname: a\ndescription: x: y\n---\n\nBody\n")
    assert fields == {"name": "a", "description": "x: y"} and body == "Body"
    with pytest.raises(ValueError, match="not YAML"):
        front_matter("---\nname: [a\n---\nBody")
    assert tool_list("Bash(git status:*), Read Edit") == ("Bash(git status:*)", "Read", "Edit")
    assert tool_list(["Bash", "Read"]) == ("Bash", "Read")


def test_what_is_skipped_is_said_once_and_a_wrong_name_only_warned(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    base = project / ".agents" / "skills"
    skill(base, "good")
    (base / "nodesc").mkdir()
    (base / "nodesc" / "SKILL.md").write_text("---\nname: nodesc\n---\nBody\n")
    (base / "broken").mkdir()
    (base / "broken" / "SKILL.md").write_text("---\nname: [broken\n---\nBody\n")
    renamed = skill(base, "folder-name")
    (renamed / "SKILL.md").write_text("---\nname: other-name\ndescription: d\n---\nB\n")
    with caplog.at_level(logging.WARNING):
        found = project_skills(project)
        project_skills(project)
    assert set(found.skills) == {"good", "other-name"}
    assert {s.path.parent.name: s.why for s in found.skipped} == {
        "broken": "the front matter is not YAML (line 2)",
        "nodesc": "no description",
    }
    said = [r.getMessage() for r in caplog.records]
    assert sum("nodesc" in m for m in said) == 1 and any("other-name" in m for m in said)


def test_a_repositorys_links_are_not_followed_and_the_scan_is_bounded(
    project: Path, home: Path
) -> None:
    outside = home / "elsewhere"
    skill(outside, "stolen")
    (project / ".claude").mkdir()
    (project / ".claude" / "skills").symlink_to(outside)  # the whole folder, a link
    base = project / ".agents" / "skills"
    base.mkdir(parents=True)
    (base / "linked").symlink_to(outside / "stolen")
    deep = base
    for level in range(8):
        deep = deep / f"l{level}"
    skill(deep, "too-deep")
    skill(base / "a" / "b", "nested")
    assert set(project_skills(project).skills) == {"nested"}


def test_the_nearest_folder_wins_up_to_the_git_root(project: Path) -> None:
    inner = project / "packages" / "app"
    skill(inner / ".claude" / "skills", "lint", "the app's own lint")
    skill(project / ".agents" / "skills", "lint", "the repository's lint")
    skill(project.parent / ".agents" / "skills", "outside-the-repository")
    found = project_skills(inner)
    assert (
        set(found.skills) == {"lint"} and found.skills["lint"].description == "the app's own lint"
    )


def test_a_project_skill_overrides_the_users_only_once_approved(project: Path, home: Path) -> None:
    skill(home / ".agents" / "skills", "review", "the user's review")
    skill(project / ".agents" / "skills", "review", "the project's review")
    trust = Trust(project)
    waiting = available(project, (), trust)
    assert waiting.skills["review"].description == "the user's review"
    assert list(waiting.waiting) == ["skill:review"]
    trust.approve("shared", "skill:review", project_skills(project).skills["review"].digest)
    assert available(project, (), trust).skills["review"].description == "the project's review"


def test_three_hundred_skills_stay_within_the_budget() -> None:
    found = Found()
    base = Path("/nowhere")
    for number in range(300):
        found.add(
            skill_tool.Skill(
                name=f"skill-{number:03}",
                description="Does a thing well. " * 12,
                folder=base,
                kind="user",
                origin="~/x",
                body="",
                digest="",
            )
        )
    skills = list(found.skills.values())
    for budget in (8000, 4000, 1000):
        catalog = skill_tool.catalog(skills, budget)
        assert len(catalog) <= budget and "skill-000" in catalog
    assert skill_tool.catalog(skills[:3], 8000).count("Does a thing well.") == 36


def test_arguments_replace_their_placeholders() -> None:
    assert substituted("Fix $ARGUMENTS (first $1, second $2)", "12 'a b'") == (
        "Fix 12 'a b' (first 12, second a b)"
    )
    assert substituted("Just do it.", "now") == "Just do it.\n\nARGUMENTS: now"


def _system(fake: FakeAnthropic, index: int = 0) -> str:
    system = fake.requests[index].body["system"]
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def test_the_first_request_holds_the_catalog_not_an_unapproved_workspaces(
    project: Path, home: Path, fake: FakeAnthropic
) -> None:
    skill(home / ".agents" / "skills", "greet", "Greet people warmly.", "USER BODY")
    skill(project / ".agents" / "skills", "deploy", "Deploy to staging.", "PROJECT BODY")
    fake.script(reply(text("ok")), reply(text("ok")))
    done = run(project, fake, "-p", "hi")
    assert done.returncode == 0, done.stderr
    system = _system(fake)
    assert "- greet: Greet people warmly." in system and "USER BODY" not in system
    assert "deploy" not in system and "PROJECT BODY" not in system
    assert "not approved" in done.stderr and "skills deploy" in done.stderr
    names = [t for t in fake.requests[0].body["tools"] if t["name"] == "skill"]
    assert names[0]["input_schema"]["properties"]["name"]["enum"] == ["greet"]
    listed = agentls(project, fake, "skills")
    assert "deploy (.agents/skills) [waiting for approval" in listed.stdout
    assert agentls(project, fake, "skills", "approve").returncode == 0
    run(project, fake, "-p", "hi")
    assert "- deploy: Deploy to staging." in _system(fake, 1)


def test_the_skill_tool_returns_the_body_and_files_then_a_reminder(
    project: Path, home: Path, fake: FakeAnthropic
) -> None:
    folder = skill(home / ".claude" / "skills", "pdf", "Work with PDFs.", "Run scripts/fill.py.")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "fill.py").write_text("print('SCRIPT TEXT')\n")
    (folder / "reference.md").write_text("REFERENCE TEXT\n")
    fake.script(
        reply(tool_use("skill", {"name": "pdf"})),
        reply(tool_use("read_file", {"path": str(folder / "reference.md")})),
        reply(tool_use("skill", {"name": "pdf"})),
        reply(text("done")),
    )
    done = run(project, fake, "-p", "fill the form")
    assert done.returncode == 0, done.stderr
    results = [json.dumps(r.body["messages"][-1]) for r in fake.requests[1:]]
    assert '<skill_content name=\\"pdf\\">' in results[0] and "Run scripts/fill.py." in results[0]
    assert "- scripts/fill.py" in results[0] and "- reference.md" in results[0]
    assert "SCRIPT TEXT" not in results[0]
    assert "REFERENCE TEXT" in results[1]  # outside the workspace, read unasked
    assert "loaded already" in results[2]


def test_slash_name_runs_a_skill_and_a_command_file_in_p(
    project: Path, home: Path, fake: FakeAnthropic
) -> None:
    skill(home / ".agents" / "skills", "release", "Cut a release.", "Tag version $1.")
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix.md").write_text(
        "---\ndescription: Fix an issue\n---\nFix issue #$ARGUMENTS.\n"
    )
    assert agentls(project, fake, "skills", "approve").returncode == 0
    fake.script(reply(text("ok")), reply(text("ok")))
    assert run(project, fake, "-p", "/release 1.2.3").returncode == 0
    assert run(project, fake, "-p", "/fix 42").returncode == 0
    first, second = (json.dumps(r.body["messages"][0]) for r in fake.requests)
    assert '<skill_content name=\\"release\\">' in first and "Tag version 1.2.3." in first
    assert "Fix issue #42." in second


def test_a_project_skills_allowed_tools_never_let_a_command_run_unasked(
    project: Path, home: Path, fake: FakeAnthropic
) -> None:
    marker = project / "ran"
    skill(
        project / ".agents" / "skills",
        "build",
        "Build it.",
        "Run touch.",
        **{"allowed-tools": "Bash"},
    )
    assert agentls(project, fake, "skills", "approve").returncode == 0
    fake.script(
        reply(tool_use("skill", {"name": "build"})),
        reply(tool_use("bash", {"command": f"touch {marker}"})),
        reply(text("done")),
    )
    done = run(project, fake, "-p", "build")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "Refused: nobody could approve it" in json.dumps(fake.requests[2].body["messages"][-1])


def test_a_user_skills_allowed_tools_pre_approve_while_it_is_loaded(
    project: Path, home: Path, fake: FakeAnthropic
) -> None:
    skill(
        home / ".agents" / "skills",
        "mark",
        "Mark it.",
        "Run touch.",
        **{"allowed-tools": "Bash(touch:*)"},
    )
    fake.script(
        reply(tool_use("bash", {"command": "touch before"})),
        reply(tool_use("skill", {"name": "mark"})),
        reply(tool_use("bash", {"command": "touch after"})),
        reply(text("done")),
    )
    assert run(project, fake, "-p", "mark").returncode == 0
    assert not (project / "before").exists() and (project / "after").exists()


def test_disable_model_invocation_keeps_it_off_the_catalog_but_on_the_list(
    project: Path, home: Path
) -> None:
    skill(home / ".agents" / "skills", "secret-deploy", **{"disable-model-invocation": "true"})
    shared = available(project, (), Trust(project))
    assert shared.catalog() == [] and [c.name for c in shared.listing()] == ["secret-deploy"]


def test_a_plugin_folder_is_searched_with_its_prefix(tmp_path: Path) -> None:
    found = Found()
    base = tmp_path / "plugin" / "skills"
    skill(base, "lint")
    search(found, base, "plugin", "plugin demo", base.parent, "demo:")
    assert list(found.skills) == ["demo:lint"]


def test_the_terminal_prompt_completes_skills_beside_its_own_commands() -> None:
    from agentls.terminal.prompt import _Commands
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    completer = _Commands(lambda: {"/deploy": "Deploy it.", "/demo:fix": "Fix"})
    typed = Document("/de", len("/de"))
    found = [c.text for c in completer.get_completions(typed, CompleteEvent())]
    assert found == ["/deploy", "/demo:fix"]
