"""What llama.cpp's real `llama-server` showed of the adapters and the loop (issue 43),
against the fakes replaying its recorded answers (`fake_api/recordings/llamacpp/`, made by
`tests/real_server/record.py`): agentls's marks on the wire, a call cut at the token limit,
the server's own error events, a silence, the retry notice, the answer's limit within the
window, a keyless local server, and a template that takes no tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentls.interfaces import SAID, ModelError
from agentls.models import providers
from agentls.models.anthropic import AnthropicModel, ClientCache
from agentls.models.chat import ChatModel
from doubles import ScriptedModel, make_agent, say
from fake_api import FakeAnthropic, Replay, recorded, reply, text
from fake_api.chat import FakeOpenAI
from fake_api.replay import load
from terminal.test_terminal import run

HELLO = [{"role": "user", "content": [{"type": "text", "text": "Read the file a.py."}]}]
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file of the workspace.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


@pytest.fixture(params=["messages", "chat"])
def api(request: pytest.FixtureRequest) -> Iterator[FakeAnthropic]:
    """Either format's fake, as llama-server serves both: `messages` (`/v1/messages`, the
    llamacpp profile) and `chat` (`/v1/chat/completions`, the openai profile)."""
    with FakeOpenAI() if request.param == "chat" else FakeAnthropic() as fake:
        yield fake


def _format(fake: FakeAnthropic) -> str:
    return "chat" if isinstance(fake, FakeOpenAI) else "messages"


def replayed(fake: FakeAnthropic, name: str) -> Replay:
    """The recording `llamacpp/<format>_<name>` of the fake's format."""
    return recorded(f"llamacpp/{_format(fake)}_{name}")


def model(fake: FakeAnthropic, timeout: float = 120.0) -> AnthropicModel | ChatModel:
    """The adapter for llama-server on loopback, with no key, as a user sets it up."""
    if isinstance(fake, FakeOpenAI):
        endpoint = providers.endpoint("openai", fake.url, {})
        return ChatModel(ClientCache().get(endpoint), "smollm2", 1000, endpoint, {}, timeout)
    endpoint = providers.endpoint("llamacpp", fake.url, {})
    return AnthropicModel(ClientCache().get(endpoint), "smollm2", 1000, endpoint, {}, timeout)


def _settings(root: Path, fake: FakeAnthropic, **more: Any) -> None:
    """The user's settings for llama-server at the fake (the run's XDG_CONFIG_HOME)."""
    provider = "openai" if isinstance(fake, FakeOpenAI) else "llamacpp"
    settings = {"provider": provider, "baseUrl": fake.url, "model": "smollm2", **more}
    (root / ".config" / "agentls").mkdir(parents=True, exist_ok=True)
    (root / ".config" / "agentls" / "settings.json").write_text(json.dumps(settings))


# 1: agentls's marks never on any wire.


async def test_agentls_marks_never_reach_a_server_without_cache_markers() -> None:
    # llamacpp, ollama and vllm take no cache markers: the marks went out with them.
    note = {"type": "text", "text": "(The user cancelled this task.)", SAID: ""}
    messages = [HELLO[0], {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    messages.append({"role": "user", "content": [note, {"type": "text", "text": "again"}]})
    with FakeAnthropic() as fake:  # refuses an unknown field, as the API does
        fake.script(recorded("llamacpp/messages_cut_call"))
        turn = await model(fake).respond("system", messages, TOOLS, lambda piece: None)
        assert SAID not in json.dumps(fake.requests[0].body)
    assert turn.stop_reason == "max_tokens"
    assert messages[-1]["content"][0][SAID] == ""  # the conversation keeps its own


# 2: a call cut at max_tokens reaches the loop as a cut call.


async def test_a_call_cut_at_the_token_limit_is_no_broken_answer(api: FakeAnthropic) -> None:
    api.script(replayed(api, "cut_call"))
    turn = await model(api).respond("system", HELLO, TOOLS, lambda piece: None)
    assert turn.stop_reason == "max_tokens"
    assert [
        (b["type"], b["name"], b["input"]) for b in turn.content if b["type"] == "tool_use"
    ] == [("tool_use", "read_file", {})]
    assert len(api.requests) == 1  # not sent again


def test_the_model_is_told_its_cut_call_was_not_run(tmp_path: Path, api: FakeAnthropic) -> None:
    api.script(replayed(api, "cut_call"), reply(text("I will ask again, smaller.")))
    _settings(tmp_path, api)
    done = run(tmp_path, api, "-p", "read a.py", key="")
    assert done.returncode == 0, done.stdout + done.stderr
    told = json.dumps(api.requests[1].body)
    assert "Not run: your reply hit the output token limit" in told
    assert len(api.requests) == 2


# 3: the server's own error event: its words reach the user and the outcome.


async def test_the_servers_error_event_says_what_it_said(api: FakeAnthropic) -> None:
    said = _error_message(load(f"llamacpp/{_format(api)}_unparseable_call"))
    api.script(replayed(api, "unparseable_call"))
    with pytest.raises(ModelError) as caught:
        await model(api).respond("system", HELLO, TOOLS, lambda piece: None)
    assert said in str(caught.value) and "server_error" in str(caught.value)
    assert len(api.requests) == 1  # the same request would meet it again


def test_the_servers_error_is_the_outcome_of_the_run(tmp_path: Path, api: FakeAnthropic) -> None:
    said = _error_message(load(f"llamacpp/{_format(api)}_unparseable_call"))
    api.script(replayed(api, "unparseable_call"))
    _settings(tmp_path, api)
    done = run(tmp_path, api, "-p", "read a.py", "--output-format", "json", key="")
    outcome = json.loads(done.stdout)
    assert (done.returncode, outcome["status"]) == (1, "failed")
    assert said in outcome["summary"]


def _error_message(recording: dict[str, Any]) -> str:
    """The message of the recorded answer's error event (either format's)."""
    name = ""
    for line in recording["answer"]["body"].splitlines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data: ") and (name == "error" or line.startswith('data: {"error"')):
            data = json.loads(line[6:])
            return str(data.get("error", data)["message"])
    raise AssertionError("the recording has no error event")


# 4: the answer's limit held under the context window left.


async def test_the_answers_limit_is_the_room_the_window_leaves(tmp_path: Path) -> None:
    scripted = ScriptedModel(say("done"))
    agent, _ = make_agent(tmp_path, scripted, context_window=8192)
    await agent.run("x" * 9000)  # some 3,000 tokens of prompt
    (room,) = scripted.max_tokens
    assert room is not None and 0 < room < 8192 - 3000


def test_max_tokens_never_asks_for_more_than_the_window(tmp_path: Path, api: FakeAnthropic) -> None:
    api.script(replayed(api, "cut_call"), reply(text("done")))
    _settings(tmp_path, api, contextWindow=8192, maxTokens=16000)
    (tmp_path / "a.py").write_text("print('hello')\n")
    done = run(tmp_path, api, "-p", "read a.py", key="")
    assert done.returncode == 0, done.stdout + done.stderr
    for request in api.requests:
        limit = request.body.get("max_tokens") or request.body["max_completion_tokens"]
        assert limit < 8192, limit


# 5: a silence past requestTimeout named, and not asked again.


async def test_a_silence_past_the_timeout_names_the_server_and_the_setting(
    api: FakeAnthropic,
) -> None:
    api.script(replayed(api, "call").cut(3, silence=30))
    with pytest.raises(ModelError) as caught:
        await model(api, timeout=1).respond("system", HELLO, TOOLS, lambda piece: None)
    message = str(caught.value)
    assert api.url in message and "1 s" in message and "requestTimeout" in message
    assert "requestTimeout" in caught.value.hint
    assert len(api.requests) == 1


# 6: the retry notice never as the model's text in stream-json.


def test_a_retry_is_a_note_in_stream_json_not_text(tmp_path: Path, api: FakeAnthropic) -> None:
    broken = replayed(api, "call").cut(2)  # the stream ends before the answer does
    api.script(broken, reply(text("whole answer")))
    _settings(tmp_path, api)
    done = run(tmp_path, api, "-p", "go", "--output-format", "stream-json", key="")
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    texts = "".join(e["text"] for e in events if e["type"] == "text")
    assert "asking again" not in texts and texts.endswith("whole answer")
    notes = [e["text"] for e in events if e["type"] == "note"]
    assert notes == ["The answer broke off; asking again."]


# 8: a server that can say what it supports warns when tools will not reach the model.


def _props(name: str) -> Any:
    return json.loads(load(f"llamacpp/{name}")["answer"]["body"])


def test_check_model_warns_of_a_template_without_tools(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.server_info[("GET", "/props")] = _props("props_without_tools")
    settings = {"provider": "llamacpp", "baseUrl": fake.url, "model": "smollm2"}
    checked = run_check_model(tmp_path, fake, settings)
    assert checked.returncode == 0
    warning = next(line for line in checked.stdout.splitlines() if "takes no tools" in line)
    assert fake.url in warning and "--chat-template-file" in warning
    fake.server_info[("GET", "/props")] = _props("props_with_tools")
    assert "takes no tools" not in run_check_model(tmp_path, fake, settings).stdout


def test_a_run_warns_of_a_template_without_tools(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.server_info[("GET", "/props")] = _props("props_without_tools")
    fake.script(reply(text("I have no tools.")))
    _settings(tmp_path, fake)
    done = run(tmp_path, fake, "-p", "go", key="")
    assert done.returncode == 0
    assert "takes no tools" in done.stderr and "done · 1 step" in done.stderr


def test_check_model_warns_of_an_ollama_model_without_tools(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    # Ollama's /api/show lists what the model can do in `capabilities`.
    fake.server_info[("POST", "/api/show")] = {"capabilities": ["completion"]}
    settings = {"provider": "ollama", "baseUrl": fake.url, "model": "gemma3:270m"}
    checked = run_check_model(tmp_path, fake, settings)
    assert "cannot take tools" in checked.stdout and "gemma3:270m" in checked.stdout
    assert fake.requests[-1].body == {"model": "gemma3:270m"}
    fake.server_info[("POST", "/api/show")] = {"capabilities": ["completion", "tools"]}
    assert "cannot take tools" not in run_check_model(tmp_path, fake, settings).stdout


def run_check_model(root: Path, fake: FakeAnthropic, settings: dict[str, Any]) -> Any:
    from terminal.test_terminal import agentls

    return agentls(root, fake, "check-model", json.dumps(settings), key="")
