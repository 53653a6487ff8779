"""`textDocument/inlineCompletion` against fake FIM and chat servers (fake_api.completions),
through the real server in process: advertised only when enabled, the unsaved buffer cut at
the cursor, positions in UTF-16, supersession and cancellation closing the model's
connection, the chat fallback, and what never reaches a prompt."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from editor_client import EditorClient, editor
from fake_api import FakeAnthropic, reply, text
from fake_api.completions import FakeCompletions, inline_params
from lsp_text import apply_text_edits
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled


@pytest.fixture
def models() -> Iterator[FakeCompletions]:
    with FakeCompletions() as fake:
        yield fake


def enabled(models: FakeCompletions, **options: Any) -> dict[str, Any]:
    """initializationOptions turning completions on, with an Ollama model on the fake."""
    chosen = {"enabled": True, "model": "ollama/qwen2.5-coder:1.5b", "baseUrl": models.url}
    return {"approveCommands": "always", "completions": {**chosen, **options}}


@asynccontextmanager
async def completing(root: Path, api_url: str, **options: Any) -> AsyncIterator[EditorClient]:
    async with editor(root, api_url, initialization=options) as client:
        yield client


async def ask(client: EditorClient, uri: str, line: int, character: int) -> list[Any]:
    answer = await client.text_document_inline_completion_async(inline_params(uri, line, character))
    assert isinstance(answer, types.InlineCompletionList)
    return list(answer.items)


async def test_off_by_default_nothing_is_advertised_and_no_model_is_called(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text("def f():\n    return\n")
    async with editor(root, models.url) as client:
        assert client.answered is not None
        assert client.answered.capabilities.inline_completion_provider is None
        uri = client.open(root / "a.py")
        assert await ask(client, uri, 1, 10) == []
    assert models.requests == []


async def test_on_it_is_advertised(root: Path, models: FakeCompletions) -> None:
    async with editor(root, models.url, initialization=enabled(models)) as client:
        assert client.answered is not None
        assert client.answered.capabilities.inline_completion_provider is not None


async def until(check: Callable[[], bool], seconds: float = 2) -> None:
    """Return once `check()` holds (the server acts on a notification in its own time)."""
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def registers_inline_completions(capabilities: types.ClientCapabilities) -> None:
    assert capabilities.text_document is not None
    capabilities.text_document.inline_completion = types.InlineCompletionClientCapabilities(
        dynamic_registration=True
    )


async def test_enabled_later_it_is_registered_and_disabled_it_is_withdrawn(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text("x = \n")
    own = root.parent / "config" / "agentls" / "settings.json"
    own.parent.mkdir(parents=True)
    async with editor(root, models.url, capabilities=registers_inline_completions) as client:
        assert client.answered is not None
        assert client.answered.capabilities.inline_completion_provider is None
        uri = client.open(root / "a.py")
        own.write_text(json.dumps(enabled(models)))
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await until(lambda: bool(client.registrations))
        (registration,) = client.registrations
        assert registration.method == types.TEXT_DOCUMENT_INLINE_COMPLETION
        assert len(await ask(client, uri, 0, 4)) == 1
        own.write_text(json.dumps({"completions": {"enabled": False}}))
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await until(lambda: not client.registrations)
        assert client.registrations == []
        assert await ask(client, uri, 0, 4) == []
    assert len(models.requests) == 1


async def test_the_unsaved_buffer_is_cut_at_the_cursor_and_the_answer_applies_in_utf16(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text("saved = 1\n")
    models.answer = lambda _path, _body: "(ß, 'ok')"
    buffer = "# naïve 😀 données\nvalue = f😀ĳ\nend = 2\n"
    options = enabled(models, nextEdit=False)  # the completion alone, for this buffer
    async with editor(root, models.url, initialization=options) as client:
        uri = client.open(root / "a.py")
        client.type_text(uri, buffer)  # unsaved: the disk still holds `saved = 1`
        # After `f😀ĳ` on line 1: the emoji is two UTF-16 units, so column 12.
        (item,) = await ask(client, uri, 1, 12)
    cursor = buffer.index("ĳ") + 1
    (seen,) = models.requests
    assert seen.path == "/api/generate"
    assert seen.body["prompt"] == buffer[:cursor]
    assert seen.body["suffix"] == buffer[cursor:]
    assert seen.body["model"] == "qwen2.5-coder:1.5b" and seen.body["stream"] is False
    assert item.range.start == item.range.end == types.Position(1, 12)
    edit = types.TextEdit(range=item.range, new_text=item.insert_text)
    assert apply_text_edits(buffer, [edit], "utf-16") == (
        "# naïve 😀 données\nvalue = f😀ĳ(ß, 'ok')\nend = 2\n"
    )


@pytest.mark.parametrize(
    ("model", "path", "prefix_field", "suffix_field", "limit_field"),
    [
        ("llamacpp/any", "/infill", "input_prefix", "input_suffix", "n_predict"),
        ("lmstudio/qwen", "/completions", "prompt", "suffix", "max_tokens"),
        ("vllm/qwen", "/v1/completions", "prompt", "suffix", "max_tokens"),
    ],
)
async def test_each_profile_asks_its_own_fim_route(
    root: Path,
    models: FakeCompletions,
    model: str,
    path: str,
    prefix_field: str,
    suffix_field: str,
    limit_field: str,
) -> None:
    (root / "a.py").write_text("x = \ny = 2\n")
    options = enabled(models, model=model, maxTokens=64)
    async with editor(root, models.url, initialization=options) as client:
        uri = client.open(root / "a.py")
        (item,) = await ask(client, uri, 0, 4)
    (seen,) = models.requests
    assert seen.path == path
    assert seen.body[prefix_field] == "x = " and seen.body[suffix_field] == "\ny = 2\n"
    assert seen.body[limit_field] == 64
    assert item.insert_text == "completion()"


async def test_a_fim_404_is_answered_through_the_chat_prompt(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text("total = \n")
    models.status["/v1/completions"] = 404
    models.answer = lambda path, _body: "```python\nsum(xs)\n```"
    options = enabled(models, model="openai/gpt-test", baseUrl=f"{models.url}/v1")
    env = {"OPENAI_API_KEY": "sk-test-abcdef0123456789"}
    async with editor(root, models.url, initialization=options, env=env) as client:
        uri = client.open(root / "a.py")
        (item,) = await ask(client, uri, 0, 8)
    assert models.paths() == ["/v1/completions", "/v1/chat/completions"]
    chat = models.requests[1].body
    assert chat["messages"][1]["content"] == "total = <|cursor|>\n"
    assert models.requests[1].headers["authorization"] == "Bearer sk-test-abcdef0123456789"
    assert item.insert_text == "sum(xs)"  # the fence stripped


async def test_the_anthropic_format_asks_the_chat_prompt(
    root: Path, models: FakeCompletions
) -> None:
    """No model prefix: the agent's own provider (Anthropic here), which has no FIM."""
    (root / "a.py").write_text("name = \n")
    models.answer = lambda path, _body: "'agentls'"
    options = {"completions": {"enabled": True, "model": "claude-test"}}
    async with editor(root, models.url, initialization=options) as client:
        uri = client.open(root / "a.py")
        (item,) = await ask(client, uri, 0, 7)
    (seen,) = models.requests
    assert seen.path == "/v1/messages" and seen.body["model"] == "claude-test"
    assert seen.headers["x-api-key"] == "test-key-123"
    assert item.insert_text == "'agentls'"


async def test_five_quick_requests_leave_one_answer_and_close_the_others_calls(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text("x = \n")
    models.delay = 0.3
    async with editor(root, models.url, initialization=enabled(models, debounceMs=0)) as client:
        uri = client.open(root / "a.py")
        await ask(client, uri, 0, 4)  # warm: the settings read, the engine imported
        models.requests.clear()
        models.completed.clear()
        pending = []
        for _ in range(5):
            pending.append(
                asyncio.ensure_future(
                    client.text_document_inline_completion_async(inline_params(uri, 0, 4))
                )
            )
            await asyncio.sleep(0.04)
        answers = await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.sleep(0.2)  # the fake notices a closed connection within 10 ms
    for answer in answers[:4]:
        assert isinstance(answer, JsonRpcRequestCancelled) or list(answer.items) == []
    assert [item.insert_text for item in answers[4].items] == ["completion()"]
    assert len(models.completed) <= 2
    assert models.disconnected  # at least one call was running when the next came
    assert len(models.disconnected) == len(models.requests) - len(models.completed)


async def test_a_request_superseded_during_the_debounce_calls_no_model(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text("x = \n")
    options = enabled(models, debounceMs=1000)  # long: a loaded machine's delays stay inside it
    async with editor(root, models.url, initialization=options) as client:
        uri = client.open(root / "a.py")
        await ask(client, uri, 0, 4)  # warm: the settings read, the engine imported
        models.requests.clear()
        first = asyncio.ensure_future(
            client.text_document_inline_completion_async(inline_params(uri, 0, 4))
        )
        await asyncio.sleep(0.05)
        second = await client.text_document_inline_completion_async(inline_params(uri, 0, 4))
        assert list((await first).items) == []
    assert len(second.items) == 1
    assert len(models.requests) == 1


async def test_cancel_request_is_answered_at_once_and_closes_the_call(
    root: Path, models: FakeCompletions
) -> None:
    (root / "a.py").write_text("x = \n")
    models.delay = 5
    async with editor(root, models.url, initialization=enabled(models, debounceMs=0)) as client:
        uri = client.open(root / "a.py")
        future = asyncio.wrap_future(
            client.protocol.send_request(
                types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(uri, 0, 4), msg_id="ghost-1"
            )
        )
        while not models.requests:
            await asyncio.sleep(0.01)
        cancelled = time.monotonic()
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="ghost-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(future, 1)
        while not models.disconnected and time.monotonic() - cancelled < 2:
            await asyncio.sleep(0.01)
        closed = time.monotonic() - cancelled
    assert models.disconnected and closed < 0.5
    assert models.completed == []


async def test_no_secret_and_no_outside_file_reaches_a_prompt(
    root: Path, models: FakeCompletions, tmp_path: Path
) -> None:
    secret = "hunter2-very-secret-value"
    (root / ".env").write_text(f"SERVICE_TOKEN={secret}\n")
    (root / ".env.local").write_text("OTHER=1\n")
    (root / "app.py").write_text(f'token = "{secret}"\nx = \n')
    (root / "private").mkdir()
    (root / "private" / "notes.py").write_text("private_words = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.py").write_text("outside_words = 1\n")
    (root / "linked.py").symlink_to(outside / "other.py")
    options = enabled(models)
    options["permissions"] = {"deny": ["Read(private/**)"]}
    async with editor(root, models.url, initialization=options) as client:
        for path in (
            root / ".env",
            root / ".env.local",
            outside / "other.py",
            root / "linked.py",
            root / "private" / "notes.py",
        ):
            uri = client.open(path)
            assert await ask(client, uri, 0, 3) == [], path
        assert models.requests == []
        uri = client.open(root / "app.py")
        assert len(await ask(client, uri, 1, 4)) == 1
    (seen,) = models.requests
    prompt = seen.body["prompt"] + seen.body["suffix"]
    assert secret not in prompt and "[redacted]" in prompt
    for word in ("outside_words", "private_words", "OTHER"):
        assert word not in prompt


async def test_agent_run_task_works_on_the_same_server(
    root: Path, models: FakeCompletions, fake: FakeAnthropic
) -> None:
    (root / "a.py").write_text("x = \n")
    fake.script(reply(text("Nothing to change.")))
    async with editor(root, fake.url, initialization=enabled(models)) as client:
        uri = client.open(root / "a.py")
        assert len(await ask(client, uri, 0, 4)) == 1
        result = await client.run_task("look at a.py")
        assert len(await ask(client, uri, 0, 4)) == 1
    assert result["status"] == "done"
    assert len(fake.requests) == 1 and len(models.requests) == 2


async def test_a_model_server_that_is_down_gives_nothing_and_its_password_is_not_logged(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (root / "a.py").write_text("x = \n")
    with socket.socket() as taken:  # a port with nothing listening on it
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    down = {
        "enabled": True,
        "model": "ollama/m",
        "baseUrl": f"http://me:pw-0123456789@127.0.0.1:{port}",
    }
    async with editor(root, "http://127.0.0.1:9", initialization={"completions": down}) as client:
        uri = client.open(root / "a.py")
        assert await ask(client, uri, 0, 4) == []
    failures = [r.getMessage() for r in caplog.records if "completion failed" in r.getMessage()]
    assert failures and f"http://127.0.0.1:{port}/api/generate" in failures[0]
    assert not any("pw-0123456789" in r.getMessage() for r in caplog.records)


async def test_a_path_the_repositorys_own_deny_rules_name_feeds_no_prompt(
    root: Path, models: FakeCompletions
) -> None:
    (root / ".agentls").mkdir()
    (root / ".agentls" / "settings.json").write_text(
        '{"permissions": {"deny": ["Read(vault/**)"]}}'
    )
    (root / "vault").mkdir()
    (root / "vault" / "keys.py").write_text("vault_words = 1\n")
    (root / "a.py").write_text("x = \n")
    async with editor(root, models.url, initialization=enabled(models)) as client:
        assert await ask(client, client.open(root / "vault" / "keys.py"), 0, 3) == []
        assert len(await ask(client, client.open(root / "a.py"), 0, 4)) == 1
    (seen,) = models.requests
    assert "vault_words" not in str(seen.body)


async def test_a_secret_or_denied_file_opened_by_another_name_feeds_no_prompt(
    root: Path, models: FakeCompletions
) -> None:
    # A hostile repository links its `.env.production` (whose values agentls does not redact:
    # only `.env`'s) and a denied file under innocent names inside the workspace.
    (root / ".env.production").write_text("DEPLOY_TOKEN=prod-token-0123456789\n")
    (root / "vault").mkdir()
    (root / "vault" / "keys.py").write_text("vault_words = 1\n")
    (root / "config.py").symlink_to(".env.production")
    (root / "keys.py").symlink_to(Path("vault") / "keys.py")
    (root / "a.py").write_text("x = \n")
    options = enabled(models)
    options["permissions"] = {"deny": ["Read(vault/**)"]}
    async with editor(root, models.url, initialization=options) as client:
        for name in ("config.py", "keys.py"):
            assert await ask(client, client.open(root / name), 0, 3) == [], name
        assert len(await ask(client, client.open(root / "a.py"), 0, 4)) == 1
    (seen,) = models.requests
    assert "prod-token" not in str(seen.body) and "vault_words" not in str(seen.body)
