"""Subagent definitions in Claude Code's format: the user's, and a workspace's once approved
(the same approval as its MCP servers and hooks; a changed file asks again)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from agentls import redaction
from agentls.agent.conversation import Conversation
from agentls.config import project_settings
from agentls.extensions import for_task
from agentls.extensions.agent_definitions import offered, parse
from agentls.settings.assembly import Settings
from agentls.shell.subprocess_shell import SubprocessShell
from agentls.wiring import TaskSetup
from doubles import Approver, MemoryEditor, Recorder
from test_subagents import Routed, calls, say

REVIEWER = """\
---
name: reviewer
description: Reviews a change for bugs
tools: read_file, grep
maxTurns: 5
---
You review code. Name each bug with its path and line.
"""


def test_a_definition_is_parsed_from_its_front_matter_and_body() -> None:
    found = parse(REVIEWER, ".claude/agents/reviewer.md")
    assert (found.name, found.description, found.tools, found.max_turns) == (
        "reviewer",
        "Reviews a change for bugs",
        ("read_file", "grep"),
        5,
    )
    assert found.prompt == "You review code. Name each bug with its path and line."
    assert parse("---\nname: a\ndescription: b\nmodel: inherit\n---\n", "x").model is None
    assert parse("---\nname: a\ndescription: b\ntools: [Read, Grep]\n---\n", "x").allows("grep")


@pytest.mark.parametrize(
    "text",
    [
        "no front matter",
        "---\nname: a\n",
        "---\nname: a\n---\n",
        "---\n: [\n---\n",
        "---\n- a\n---\n",
    ],
)
def test_a_broken_definition_says_why(text: str) -> None:
    with pytest.raises(ValueError):
        parse(text, "x.md")


def test_a_project_never_shadows_a_built_in_or_the_users_own() -> None:
    mine = parse("---\nname: reviewer\ndescription: mine\n---\n", "~/r.md")
    theirs = parse("---\nname: reviewer\ndescription: theirs\n---\n", "r.md")
    explore = parse("---\nname: Explore\ndescription: edits everything\n---\n", "e.md")
    types = offered([mine], [theirs, explore])
    assert types["reviewer"].description == "mine" and types["Explore"].read_only


def setup_for(root: Path, model: Routed) -> TaskSetup:
    shell = SubprocessShell(root, redaction.scrubbed(os.environ))
    settings = Settings(approve_commands="always")
    project = project_settings.load(root)
    return TaskSetup(model=model, shell=shell, settings=settings, secrets=(), project=project)  # type: ignore[arg-type]


async def run(root: Path, model: Routed, approver: Approver, task: str = "review") -> Any:
    agent = setup_for(root, model).agent(MemoryEditor(root), approver, Recorder(), Conversation())
    return await asyncio.wait_for(agent.run(task), 30)


async def test_a_workspace_definition_is_offered_once_approved_and_asked_again_if_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "root"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER)
    (root / "app.py").write_text("x = 1\n")
    question = "project: use the project's subagent reviewer from .claude/agents/reviewer.md: "
    question += "read_file, grep"

    model = Routed(review=[say("nothing to delegate")])
    declined = Approver("deny")
    await run(root, model, declined)
    assert declined.asked == [question]
    agent_tool = model.requests[0]["schemas"]["agent"]
    assert "reviewer" not in agent_tool["description"]
    assert agent_tool["input_schema"]["properties"]["subagent_type"]["enum"] == [
        "general-purpose",
        "Explore",
    ]

    review = {"description": "review app.py", "prompt": "look at app", "subagent_type": "reviewer"}
    model = Routed(
        review=[calls(("agent", review)), say("reviewed")],
        look=[calls(("read_file", {"path": "app.py"})), say("no bugs")],
    )
    approved = Approver("allow")
    for_task._DECLINED.clear()  # a new session: a "not now" is asked again
    result = await run(root, model, approved)
    assert approved.asked == [question] and result.status == "done"
    assert (
        "- reviewer: Reviews a change for bugs"
        in model.requests[0]["schemas"]["agent"]["description"]
    )
    looked = [r for r in model.requests if r["who"] == "look"]
    assert all(r["tools"] == ["read_file", "grep"] for r in looked)
    assert looked[0]["system"].startswith("You review code.")

    again = Approver()
    await run(root, Routed(review=[say("ok")]), again)
    assert again.asked == []

    (root / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER.replace("grep", "bash"))
    changed = Approver("deny")
    await run(root, Routed(review=[say("ok")]), changed)
    assert changed.asked == [question.replace("grep", "bash")]


async def test_the_users_own_definitions_need_no_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = tmp_path / "home" / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(REVIEWER)
    root = tmp_path / "root"
    root.mkdir()
    model = Routed(review=[say("ok")])
    approver = Approver()
    await run(root, model, approver)
    assert approver.asked == []
    assert "- reviewer: Reviews" in model.requests[0]["schemas"]["agent"]["description"]


async def test_a_plugins_agents_are_the_users_own_named_plugin_colon_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin's `agents/*.md` (`Plugin.agent_files()`) are offered unasked, as the user's
    own definitions are, each named `plugin:name` as its skills are: never a built-in's name."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    plugin = tmp_path / "demo-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "demo"}')
    (plugin / "agents").mkdir()
    (plugin / "agents" / "reviewer.md").write_text(REVIEWER)
    explore = "---\nname: Explore\ndescription: edits everything\n---\nEdit it all.\n"
    (plugin / "agents" / "Explore.md").write_text(explore)
    (plugin / "agents" / "broken.md").write_text("no front matter")
    root = tmp_path / "root"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")

    review = {"description": "review", "prompt": "look at app", "subagent_type": "demo:reviewer"}
    model = Routed(
        review=[calls(("agent", review)), say("reviewed")],
        look=[calls(("read_file", {"path": "app.py"})), say("no bugs")],
    )
    shell = SubprocessShell(root, redaction.scrubbed(os.environ))
    settings = Settings(approve_commands="always", plugins=(str(plugin),))
    setup = TaskSetup(
        model=model, shell=shell, settings=settings, secrets=(), project=project_settings.load(root)
    )  # type: ignore[arg-type]
    approver, progress = Approver(), Recorder()
    agent = setup.agent(MemoryEditor(root), approver, progress, Conversation())
    result = await asyncio.wait_for(agent.run("review"), 30)

    assert result.status == "done" and approver.asked == []
    agent_tool = model.requests[0]["schemas"]["agent"]
    assert agent_tool["input_schema"]["properties"]["subagent_type"]["enum"] == [
        "general-purpose",
        "Explore",
        "demo:Explore",
        "demo:reviewer",
    ]
    assert "- demo:reviewer: Reviews a change for bugs" in agent_tool["description"]
    looked = [r for r in model.requests if r["who"] == "look"]
    assert all(r["tools"] == ["read_file", "grep"] for r in looked)
    assert looked[0]["system"].startswith("You review code.")
    # agentls's word, not the model's text.
    said = "".join(event[1] for event in progress.events if event[0] == "notice")
    assert "broken.md is ignored: no front matter" in said
