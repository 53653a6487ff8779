"""Anthropic's web_search server tool: offered only when the user turns it on, its blocks
read from the stream, and its queries, results and citations shown in the transcript."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.agent.server_tools import report_server_tools
from agentls.interfaces import Turn, Usage
from agentls.models.anthropic import WEB_SEARCH, ClientCache
from agentls.models.message_stream import MessageAnswer
from agentls.settings.assembly import Settings
from agentls.wiring import prepare_task
from doubles import Recorder, ScriptedModel, make_agent
from editor_client import editor
from fake_api import FakeAnthropic, cited, reply, text, web_search
from terminal.test_terminal import run

SEARCHED = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
     "input": {"query": "pygls 2 release"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
        {"type": "web_search_result", "url": "https://pypi.org/project/pygls/", "title": "pygls",
         "encrypted_content": "abc", "page_age": None}]},
    {"type": "text", "text": "pygls 2.1 is out.", "citations": [
        {"type": "web_search_result_location", "url": "https://pypi.org/project/pygls/",
         "title": "pygls", "encrypted_index": "x", "cited_text": "2.1"}]},
]  # fmt: skip


def test_server_tool_use_input_is_read_from_its_deltas() -> None:
    answer = MessageAnswer(lambda _: None)
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                           "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"query": "pyg'}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": 'ls"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": SEARCHED[1]},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
    ]  # fmt: skip
    for event in events:
        answer.add(event)
    search, results = answer.turn().content
    assert search == {**SEARCHED[0], "input": {"query": "pygls"}}
    assert results["content"][0]["url"] == "https://pypi.org/project/pygls/"


def test_searches_and_citations_are_shown_in_the_transcript() -> None:
    shown = Recorder()
    report_server_tools(SEARCHED, shown)
    step, done, (_, sources) = shown.events
    assert (step, done) == (("step", "web_search", "pygls 2 release"), ("done", "web_search", "ok"))
    assert shown.details == ["1 pages found, 1 cited"]
    assert "Sources:\n[1] pygls <https://pypi.org/project/pygls/>" in sources


async def test_a_paused_turn_goes_on(tmp_path: Path) -> None:
    paused = Turn(SEARCHED[:2], "pause_turn", Usage(10, 5))
    model = ScriptedModel(paused, Turn([SEARCHED[2]], "end_turn", Usage(10, 5)))
    agent, _ = make_agent(tmp_path, model)
    result = await agent.run("what is the latest pygls?")
    assert (result.status, result.summary) == ("done", "pygls 2.1 is out.")
    assert len(model.requests) == 2


def test_web_search_is_offered_only_when_on_and_only_on_the_messages_wire(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    clients = ClientCache()
    on = prepare_task(tmp_path, Settings(web_search=True, sandbox="off"), clients)
    off = prepare_task(tmp_path, Settings(sandbox="off"), clients)
    chat = prepare_task(
        tmp_path,
        Settings(web_search=True, provider="openai", model="gpt-4o", sandbox="off"),
        clients,
    )
    assert on.model.web_search and not off.model.web_search and not chat.model.web_search
    assert chat.warning is not None and "has no web search of its own" in chat.warning
    assert WEB_SEARCH["name"] == "web_search" and json.dumps(WEB_SEARCH)
    # Anthropic's format is not Anthropic's API: a local server has no search (issue 38).
    local = prepare_task(
        tmp_path,
        Settings(web_search=True, provider="ollama", model="qwen3", sandbox="off"),
        clients,
    )
    assert not local.model.web_search
    assert local.warning is not None and "Ollama has no web search of its own" in local.warning


FOUND = [
    ("https://pypi.org/project/pygls/", "pygls on PyPI"),
    ("https://github.com/openlawlibrary/pygls", "pygls on GitHub"),
    ("https://pygls.readthedocs.io/", "pygls docs"),
]
CITED = {"type": "web_search_result_location", "url": FOUND[1][0], "title": FOUND[1][1],
         "encrypted_index": "x", "cited_text": "2.1"}  # fmt: skip


def _user_settings(root: Path, settings: dict[str, object]) -> None:
    (root / ".config" / "agentls").mkdir(parents=True)
    (root / ".config" / "agentls" / "settings.json").write_text(json.dumps(settings))


def test_a_provider_without_search_is_not_sent_it_and_the_user_is_told(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    """Issue 38: with the ollama profile (Anthropic's format, no search), Anthropic's
    web_search was sent anyway, and nothing said the provider has none."""
    _user_settings(
        tmp_path, {"webSearch": True, "provider": "ollama", "baseUrl": fake.url, "model": "qwen3"}
    )
    fake.script(reply(text("No search here.")))
    done = run(tmp_path, fake, "-p", "what is new in pygls?")
    assert done.returncode == 0, done.stderr
    assert "web_search" not in [tool["name"] for tool in fake.requests[0].body["tools"]]
    assert done.stderr.count("webSearch is on, but Ollama has no web search of its own") == 1


def test_every_page_found_is_shown_and_the_cited_marked(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    """Issue 38: only the cited page was shown, not the pages the search found."""
    _user_settings(tmp_path, {"webSearch": True})
    answer = reply(*web_search("pygls 2", FOUND), cited("pygls 2.1 is out.", CITED))
    fake.script(answer)
    shown = run(tmp_path, fake, "what is new in pygls?").stdout
    assert "✓ 3 pages found, 1 cited" in shown
    for line in (
        "- pygls on PyPI <https://pypi.org/project/pygls/>",
        "[1] pygls on GitHub <https://github.com/openlawlibrary/pygls>",
        "- pygls docs <https://pygls.readthedocs.io/>",
    ):
        assert f"    {line}\n" in shown
    assert "Sources:\n[1] pygls on GitHub <https://github.com/openlawlibrary/pygls>" in shown
    fake.script(answer)
    streamed = run(tmp_path, fake, "-p", "again", "--output-format", "stream-json").stdout
    (step,) = [
        event
        for event in map(json.loads, streamed.splitlines())
        if event["type"] == "step" and event["state"] == "succeeded"
    ]
    assert step["tool"] == "web_search" and step["detail"] == "3 pages found, 1 cited"
    assert step["result"].splitlines() == [
        "- pygls on PyPI <https://pypi.org/project/pygls/>",
        "[1] pygls on GitHub <https://github.com/openlawlibrary/pygls>",
        "- pygls docs <https://pygls.readthedocs.io/>",
    ]


async def test_the_request_carries_the_server_tool_last(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("ok")))
    async with editor(root, fake.url, initialization={"webSearch": True}) as client:
        assert (await client.run_task("search"))["status"] == "done"
    tools = fake.requests[0].body["tools"]
    assert tools[-1] == WEB_SEARCH and tools[0]["name"] == "bash"
