"""MCP servers as users have them: every page of a list, a list changed mid-task, resources,
prompts as `/` commands, a server's question to the user (tests/extensions/mcp_servers/
paged_server.py, on the wire of protocol 2025-11-25)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from acp.schema import AllowedOutcome, AvailableCommandsUpdate, TextContentBlock
from agentls.acp.agent import AcpAgent
from agentls.extensions.commands import for_workspace
from agentls.extensions.mcp_user import Answer
from agentls.terminal.adapters import TerminalApprover, TerminalMcpUser
from doubles import ScriptedModel, call, make_agent, results, say
from editor_client import answers_questions, editor
from extensions.test_mcp import _with_servers
from fake_api import FakeAnthropic, reply, text, tool_use
from terminal.test_terminal import run
from terminal.test_terminal_conversation import Terminal, _env

PAGED = {
    "command": sys.executable,
    "args": [str(Path(__file__).parent / "mcp_servers" / "paged_server.py")],
}


class _AcpClient:
    """An ACP client that allows what it is asked and keeps every update."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: Any) -> Any:
        return SimpleNamespace(outcome=AllowedOutcome(option_id="allow", outcome="selected"))


class Person:
    """A door's user who answers a form with `content` (or declines)."""

    def __init__(self, content: dict[str, Any] | None) -> None:
        self.content = content
        self.asked: list[tuple[str, str, dict[str, Any]]] = []

    def open_url(self, server: str, url: str, why: str) -> None:
        raise AssertionError("no sign-in expected")

    async def elicit(self, server: str, message: str, schema: dict[str, Any]) -> Answer:
        self.asked.append((server, message, schema))
        if self.content is None:
            return Answer("decline", reason="no")
        return Answer("accept", self.content)


def _agent(tmp_path: Path, model: ScriptedModel, user: Any = None) -> Any:
    agent, _ = make_agent(tmp_path, model)
    _with_servers(agent, {"paged": PAGED}, mcp_startup_timeout=60.0)
    agent.tools.hooks.user = user
    return agent


async def test_every_page_of_tools_reaches_the_model(tmp_path: Path) -> None:
    model = ScriptedModel(call("mcp__paged__second"), say("done"))
    agent = _agent(tmp_path, model)
    await agent.run("use the second tool")
    offered = [name for name in model.tool_names[0] if name.startswith("mcp__paged__")]
    assert offered == [
        "mcp__paged__first",
        "mcp__paged__second",
        "mcp__paged__add_tool",
        "mcp__paged__ask",
    ]
    assert results(model.requests[1])[0]["content"] == "second ran"


async def test_a_tool_added_mid_task_is_offered_at_the_next_step(tmp_path: Path) -> None:
    model = ScriptedModel(call("mcp__paged__add_tool"), call("mcp__paged__late"), say("done"))
    agent = _agent(tmp_path, model)
    await agent.run("add a tool, then use it")
    assert "mcp__paged__late" not in model.tool_names[0]
    assert "mcp__paged__late" in model.tool_names[1]
    assert results(model.requests[2])[0]["content"] == "late ran"


async def test_a_resource_is_read_by_the_model(tmp_path: Path) -> None:
    model = ScriptedModel(
        call("read_mcp_resource", server="paged", uri="memo://two"),
        call("read_mcp_resource", server="nope", uri="memo://two"),
        say("done"),
    )
    agent = _agent(tmp_path, model)
    await agent.run("read the second memo")
    assert "read_mcp_resource" in model.tool_names[0]
    description = agent.tools.added_tools["read_mcp_resource"].description
    assert "paged memo://one (The first memo)" in description
    assert "memo://two" in description  # the list's second page
    assert results(model.requests[1])[0]["content"] == "the memo at memo://two"
    assert "no MCP server 'nope'" in results(model.requests[2])[0]["content"]


async def test_a_prompt_runs_as_a_slash_command(tmp_path: Path) -> None:
    model = ScriptedModel(say("reviewed"))
    agent = _agent(tmp_path, model)
    await agent.run("/mcp__paged__review app.py security")
    task = model.requests[0][0]["content"]
    assert "Review app.py for security." in str(task)
    # One command list: the registry's, which every door reads, has the prompt too.
    listed = {c.name: c for c in for_workspace(tmp_path, ()).listing()}
    command = listed["mcp__paged__review"]
    assert (command.hint, command.origin) == ("path [focus]", "MCP server paged")
    assert agent.tools.hooks.shared.commands["mcp__paged__review"].expander is not None

    model = ScriptedModel(say("never"))
    agent = _agent(tmp_path, model)
    result = await agent.run("/mcp__paged__review")
    assert result.status == "failed" and "needs path" in result.summary
    assert model.requests == []

    model = ScriptedModel(say("never"))
    agent = _agent(tmp_path, model)
    result = await agent.run("/mcp__paged__nope")
    assert result.status == "failed" and "no MCP prompt /mcp__paged__nope" in result.summary
    assert "/mcp__paged__review" in result.summary and model.requests == []


async def test_a_question_is_answered_with_the_defaults_filled_in(tmp_path: Path) -> None:
    person = Person({"name": "Grace"})
    model = ScriptedModel(call("mcp__paged__ask"), say("done"))
    agent = _agent(tmp_path, model, person)
    await agent.run("who am I?")
    ((server, message, schema),) = person.asked
    assert (server, message) == ("paged", "Who are you?")
    assert schema["properties"]["age"]["default"] == 36
    told = results(model.requests[1])[0]["content"]
    assert told == 'the answer: {"action": "accept", "content": {"age": 36, "name": "Grace"}}'


async def test_a_question_nobody_can_answer_is_declined_naming_the_server(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(call("mcp__paged__ask"), say("done"))
    agent = _agent(tmp_path, model)  # no door's user: nobody to ask
    await agent.run("who am I?")
    told = results(model.requests[1])[0]["content"]
    assert '"action": "decline"' in told
    assert "the MCP server paged asked the user a question" in told


def _user_settings(root: Path) -> None:
    folder = root / ".config" / "agentls"
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"mcpServers": {"paged": PAGED}, "mcpStartupTimeout": 60}
    (folder / "settings.json").write_text(json.dumps(settings))


def test_the_terminal_asks_each_field_and_enter_keeps_the_default(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    _user_settings(tmp_path)
    fake.script(reply(tool_use("mcp__paged__ask", {})), reply(text("done")))
    done = run(tmp_path, fake, "--yes", "who am I?", stdin="Grace\n\n\n")
    assert done.returncode == 0, done.stderr + done.stdout
    assert "The MCP server paged asks: Who are you?" in done.stdout
    assert "Your name* (Enter: Ada): " in done.stdout
    assert "age (in years) (Enter: 36): " in done.stdout
    told = json.dumps(fake.requests[1].body["messages"][-1])
    assert '\\"age\\": 36, \\"name\\": \\"Grace\\"' in told


def test_under_p_a_question_is_declined_naming_the_server(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    _user_settings(tmp_path)
    fake.script(reply(tool_use("mcp__paged__ask", {})), reply(text("done")))
    done = run(tmp_path, fake, "--yes", "-p", "who am I?")
    assert done.returncode == 0, done.stderr
    told = json.dumps(fake.requests[1].body["messages"][-1])
    assert '\\"action\\": \\"decline\\"' in told
    assert "the MCP server paged asked a question (Who are you?), but agentls run -p" in told
    # ...and the run's output says so (issue 38): each format its way.
    assert (
        "agentls: the MCP server paged asked a question, declined (nobody can answer under "
        "agentls run -p): Who are you?\n"
    ) in done.stderr
    declined = {"server": "paged", "message": "Who are you?", "action": "decline"}
    fake.script(reply(tool_use("mcp__paged__ask", {})), reply(text("done")))
    answer = json.loads(
        run(tmp_path, fake, "--yes", "-p", "who?", "--output-format", "json").stdout
    )
    assert answer["elicitations"] == [declined]
    fake.script(reply(tool_use("mcp__paged__ask", {})), reply(text("done")))
    streamed = run(tmp_path, fake, "--yes", "-p", "who?", "--output-format", "stream-json").stdout
    events = [json.loads(line) for line in streamed.splitlines()]
    assert {"type": "elicitation", **declined} in events


async def test_an_editor_that_declares_it_answers_a_question_by_agent_elicit(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool_use("mcp__paged__ask", {})), reply(text("done")))
    settings = {"mcpServers": {"paged": PAGED}, "mcpStartupTimeout": 60}
    async with editor(
        tmp_path,
        fake.url,
        initialization={**settings, "approveCommands": "always"},
        capabilities=answers_questions,
    ) as client:
        client.answers.append({"action": "accept", "content": {"name": "Lin", "age": "40"}})
        await client.run_task("who am I?")
    (asked,) = client.questions
    assert asked.server == "paged" and asked.message == "Who are you?"
    fields = [(f.name, f.type, f.default, f.required) for f in asked.fields]
    assert fields == [("name", "string", "Ada", True), ("age", "integer", 36, False)]
    told = json.dumps(fake.requests[1].body["messages"][-1])
    assert '\\"age\\": 40, \\"name\\": \\"Lin\\"' in told


async def test_an_editor_that_cannot_answer_has_the_question_declined(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool_use("mcp__paged__ask", {})), reply(text("done")))
    settings = {"mcpServers": {"paged": PAGED}, "mcpStartupTimeout": 60}
    async with editor(
        tmp_path, fake.url, initialization={**settings, "approveCommands": "always"}
    ) as client:
        await client.run_task("who am I?")
    assert client.questions == []
    told = json.dumps(fake.requests[1].body["messages"][-1])
    assert "this editor cannot show it (it does not answer agent/elicit)" in told


class _Screen:
    """A terminal whose user takes a while over each question: how many are open at once."""

    def __init__(self) -> None:
        self.open = self.most = 0

    def say(self, text: str, style: str = "") -> None:
        pass

    async def _question(self, answer: str) -> str:
        self.open += 1
        self.most = max(self.most, self.open)
        await asyncio.sleep(0.05)
        self.open -= 1
        return answer

    async def ask(self, question: str, answers: Any) -> str:
        return await self._question("y")

    async def ask_text(self, question: str, answers: Any) -> str:
        return await self._question("")  # Enter: the default


async def test_the_terminal_puts_a_servers_question_after_the_approvers_own() -> None:
    """An MCP tool's call runs beside the turn's other read-only calls: its question and an
    approval would share the line and both wait for stdin (one forever)."""
    screen: Any = _Screen()
    approver = TerminalApprover(screen, None)  # type: ignore[arg-type]
    user = TerminalMcpUser(screen, None, approver.asking)  # type: ignore[arg-type]
    schema = {"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}}}
    approved, answer = await asyncio.gather(
        approver.approve("read_file a"), user.elicit("paged", "Who are you?", schema)
    )
    assert approved == "allow" and answer.action == "accept" and screen.most == 1


def test_at_the_first_prompt_a_question_is_asked_and_a_prompt_is_a_command(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """A real terminal: the first `agentls>` prompt is drawn before the SDK loads
    (`terminal/first_prompt.py`); a server's question and its prompts work from it on."""
    _user_settings(tmp_path)
    fake.script(
        reply(tool_use("mcp__paged__ask", {})), reply(text("Asked.")), reply(text("Reviewed."))
    )
    shell = Terminal(tmp_path, _env(tmp_path, fake, "xterm-256color"), "--yes")
    try:
        shell.expect("Ctrl-D leaves.")
        shell.type("who am I?\r")
        shell.expect("The MCP server paged asks: Who are you?")
        shell.expect("Your name* (Enter: Ada): ")
        shell.type("Grace\n")
        shell.expect("age (in years) (Enter: 36): ")
        shell.type("\n")
        shell.expect("Send these answers? [Y/n] ")
        shell.type("\n")
        shell.expect("Asked.")
        told = json.dumps(fake.requests[1].body["messages"][-1])
        assert '\\"age\\": 36, \\"name\\": \\"Grace\\"' in told
        shell.expect("agentls>")
        shell.type("/mcp__paged__review app.py\r")
        shell.expect("Reviewed.")
        assert "Review app.py" in json.dumps(fake.requests[2].body["messages"][-1])
        shell.expect("agentls>")
        shell.type("\x04")
        assert shell.process.wait(timeout=60) == 0
    finally:
        shell.close()


def test_under_p_a_prompt_is_a_command(tmp_path: Path, fake: FakeAnthropic) -> None:
    _user_settings(tmp_path)
    fake.script(reply(text("Reviewed.")))
    done = run(tmp_path, fake, "--yes", "-p", "/mcp__paged__review app.py security")
    assert done.returncode == 0, done.stderr
    assert "Review app.py for security." in json.dumps(fake.requests[0].body["messages"][-1])


async def test_an_editor_lists_the_prompts_with_the_other_commands(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    """agent.commands (VS Code's and Neovim's completion) reads the one command list: the
    prompts of the servers a task started join it."""
    fake.script(reply(text("Reviewed.")))
    settings = {"mcpServers": {"paged": PAGED}, "mcpStartupTimeout": 60}
    async with editor(
        tmp_path, fake.url, initialization={**settings, "approveCommands": "always"}
    ) as client:
        await client.run_task("/mcp__paged__review app.py")
        listed = await client.command("agent.commands")
    assert "Review app.py" in json.dumps(fake.requests[0].body["messages"][-1])
    review = {"name": "mcp__paged__review", "description": "Review a file", "hint": "path [focus]"}
    assert review in listed


async def test_acp_offers_the_prompts_in_its_commands_update(
    tmp_path: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    _user_settings(tmp_path)
    fake.script(reply(text("Reviewed.")))
    agent, client = AcpAgent(), _AcpClient()
    agent.on_connect(client)
    await agent.initialize(protocol_version=1)
    session = await agent.new_session(cwd=str(tmp_path))
    prompt = [TextContentBlock(type="text", text="/mcp__paged__review app.py")]
    answer = await agent.prompt(session_id=session.session_id, prompt=prompt)
    assert answer.stop_reason == "end_turn"
    assert "Review app.py" in json.dumps(fake.requests[0].body["messages"][-1])
    offered = [u for u in client.updates if isinstance(u, AvailableCommandsUpdate)]
    (review,) = [c for c in offered[-1].available_commands if c.name == "mcp__paged__review"]
    assert review.input is not None and review.input.root.hint == "path [focus]"
