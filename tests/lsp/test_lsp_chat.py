"""What an editor's own chat view needs of the server: plain chat with the configured model
(`agent.chat`), which model that is (`agent.model`), the session a task went into, and a
command's output tail (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from editor_client import EditorClient, editor
from fake_api import FakeAnthropic, hang, reply, text, tool_use
from fake_api.chat import FakeOpenAI
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled


def chat_params(messages: list[dict[str, str]], token: str | None = None) -> Any:
    return types.ExecuteCommandParams(
        command="agent.chat", arguments=[{"messages": messages}], work_done_token=token
    )


async def test_chat_streams_the_answer_and_sends_no_tools(
    fake: FakeAnthropic, lsp_editor: EditorClient
) -> None:
    fake.script(reply(text("A decorator wraps a function.")))
    answer = await lsp_editor.workspace_execute_command_async(
        chat_params(
            [
                {"role": "assistant", "text": "dropped: a conversation starts with the user"},
                {"role": "user", "text": "what is"},
                {"role": "user", "text": "a decorator? my key is test-key-123"},
            ],
            token="chat-1",
        )
    )
    assert answer["status"] == "done"
    assert answer["text"] == "A decorator wraps a function."
    assert "".join(lsp_editor.texts) == answer["text"]
    (request,) = fake.requests
    assert "tools" not in request.body or request.body["tools"] == []
    (message,) = request.body["messages"]
    assert message["role"] == "user"
    # Joined into one user turn; the harness's API key never reaches the model.
    assert message["content"][0]["text"] == "what is\n\na decorator? my key is [redacted]"
    assert "@agentls" in request.body["system"][0]["text"]


async def test_chat_with_an_openai_format_provider(root: Path) -> None:
    with FakeOpenAI() as api:
        api.script(reply(text("Hi there.")))
        # provider and baseUrl are user-only: the editor's initializationOptions, never
        # workspace/configuration.
        settings = {"provider": "openai", "baseUrl": api.url, "model": "gpt-test"}
        env = {"OPENAI_API_KEY": "sk-openai-test-0123456789"}
        async with editor(root, api.url, initialization=settings, env=env) as client:
            answer = await client.command(
                "agent.chat", {"messages": [{"role": "user", "text": "hi"}]}
            )
            described = await client.command("agent.model")
        assert answer["text"] == "Hi there." and answer["model"] == "gpt-test"
        assert "tools" not in api.requests[0].body  # OpenAI refuses an empty list
        assert api.errors == []
    assert described["id"] == "gpt-test"
    assert described["provider"] == "openai" and described["contextWindow"] == 128_000


@pytest.mark.parametrize(
    "arguments",
    [
        [],
        [{"messages": "hi"}],
        [{"messages": [{"role": "system", "text": "x"}]}],
        [{"messages": [{"role": "user", "text": "q"}, {"role": "assistant", "text": "a"}]}],
    ],
)
async def test_chat_refuses_malformed_conversations(
    lsp_editor: EditorClient, arguments: list[Any]
) -> None:
    with pytest.raises(JsonRpcException, match=r"agent\.chat"):
        await lsp_editor.command("agent.chat", *arguments)


async def test_chat_is_cancelled_by_cancel_request(
    fake: FakeAnthropic, lsp_editor: EditorClient
) -> None:
    fake.script(hang(1.5, then=reply(text("late"))))
    request_id = str(uuid.uuid4())
    future = asyncio.wrap_future(
        lsp_editor.protocol.send_request(
            types.WORKSPACE_EXECUTE_COMMAND,
            chat_params([{"role": "user", "text": "hi"}]),
            msg_id=request_id,
        )
    )
    while not fake.requests:
        await asyncio.sleep(0.01)
    lsp_editor.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(future, 5)
    await asyncio.sleep(2)
    assert lsp_editor.texts == [], "the model's answer was abandoned, not streamed"
    fake.script(reply(text("back")))
    again = await lsp_editor.command("agent.chat", {"messages": [{"role": "user", "text": "hi"}]})
    assert again["text"] == "back"


async def test_model_and_a_missing_key(fake: FakeAnthropic, root: Path) -> None:
    async with editor(root, fake.url) as client:
        described = await client.command("agent.model")
    assert described == {
        "id": "claude-sonnet-5-5",
        "provider": "anthropic",
        "providerTitle": "Anthropic",
        "contextWindow": 200_000,
        "maxOutputTokens": 16000,
    }
    # Not on loopback, where a local server wants no key.
    hosted = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "https://api.anthropic.invalid"}
    async with editor(root, fake.url, env=hosted) as client:
        described = await client.command("agent.model")
        with pytest.raises(JsonRpcException, match="No Anthropic API key is set"):
            await client.command("agent.chat", {"messages": [{"role": "user", "text": "hi"}]})
    assert described["error"].startswith("No Anthropic API key is set.")


async def test_a_task_names_its_session_and_a_command_its_output_tail(
    fake: FakeAnthropic, lsp_editor: EditorClient
) -> None:
    fake.script(reply(tool_use("bash", {"command": "seq 1 30"})), reply(text("counted")))
    result = await lsp_editor.run_task("count")
    (listed,) = await lsp_editor.command("agent.sessions")
    assert result["session"] == listed["id"] and listed["current"]
    done = lsp_editor.steps[-1]
    assert done["state"] == "succeeded"
    assert done["outputTail"] == "\n".join(str(n) for n in range(21, 31))
