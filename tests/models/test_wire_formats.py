"""End to end for both wire formats: the real server and SDKs against the Messages fake and the
Chat Completions fake, with the same scripts: an edit reviewed and landed that bash then sees,
cancel, a tool error, retries, usage and cost."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentls.models.costs import price_of
from doubles import running_argv, unique_seconds, usage_of
from editor_client import editor
from fake_api import FakeAnthropic, rate_limited, reply, server_error, text, tool_use
from fake_api.chat import FakeOpenAI
from pictures import png


@dataclass
class Api:
    """One wire format's fake, the server environment that points at it, and its model."""

    fake: FakeAnthropic
    env: dict[str, str]
    model: str

    @property
    def openai(self) -> bool:
        return isinstance(self.fake, FakeOpenAI)

    def results(self, body: dict[str, Any]) -> list[tuple[str, bool]]:
        """The tool results of a request, as (text, is an error), in either format."""
        if self.openai:
            return [
                (m["content"].removeprefix("Error: "), m["content"].startswith("Error: "))
                for m in body["messages"]
                if m["role"] == "tool"
            ]
        return [
            (b["content"], bool(b.get("is_error")))
            for m in body["messages"]
            if m["role"] == "user"
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]


@pytest.fixture(params=["anthropic", "openai"])
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    openai = request.param == "openai"
    with FakeOpenAI() if openai else FakeAnthropic() as fake:
        env = {
            "AGENTLS_PROVIDER": "openai",
            "OPENAI_BASE_URL": fake.url,
            "OPENAI_API_KEY": "sk-test-openai-123",
            "AGENTLS_MODEL": "gpt-4o",
        }
        anthropic = {"AGENTLS_MODEL": "claude-sonnet-5-5"}
        yield Api(fake, env, "gpt-4o") if openai else Api(fake, anthropic, "claude-sonnet-5-5")
        assert fake.errors == []


SOURCE = "def greet():\n    return 'hello'\n"


async def test_an_edit_is_reviewed_landed_and_seen_by_bash(api: Api, root: Path) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    api.fake.script(
        reply(
            text("Changing it."),
            tool_use("edit_file", {"path": "app.py", "old_text": "hello", "new_text": "bye"}),
        ),
        reply(tool_use("bash", {"command": "cat app.py"})),
        reply(text("The greeting is bye.")),
    )
    async with editor(root, api.fake.url, env=api.env) as client:
        uri = client.open(path)
        result = await client.run_task("say bye", uri=uri)
        (request,) = client.edit_requests
        assert request.label == "edit_file: app.py"
        assert client.documents[uri][0] == SOURCE.replace("hello", "bye")
    assert (result["status"], result["summary"]) == ("done", "The greeting is bye.")
    assert result["edits"] == {"applied": 1, "rejected": 0, "partly": 0}
    assert path.read_text() == SOURCE.replace("hello", "bye")
    assert api.results(api.fake.requests[-1].body) == [
        ("Edited app.py: 1 hunk accepted.", False),
        ("exit code 0\n" + SOURCE.replace("hello", "bye").rstrip("\n"), False),
    ]
    assert api.fake.requests[-1].body["model"] == api.model


async def test_a_tool_error_goes_back_to_the_model(api: Api, root: Path) -> None:
    api.fake.script(reply(tool_use("read_file", {"path": "missing.py"})), reply(text("No file.")))
    async with editor(root, api.fake.url, env=api.env) as client:
        result = await client.run_task("read it")
    assert (result["status"], result["summary"]) == ("done", "No file.")
    ((told, is_error),) = api.results(api.fake.requests[-1].body)
    assert is_error and "missing.py" in told


async def test_cancel_kills_bash_and_the_next_task_starts_clean(api: Api, root: Path) -> None:
    seconds = unique_seconds()  # the sleep is found by it, sandboxed or not
    api.fake.script(reply(tool_use("bash", {"command": f"sleep {seconds}"})))
    async with editor(root, api.fake.url, env=api.env) as client:
        _, answer = client.start_task("sleep")
        deadline = time.monotonic() + 30
        while not running_argv("sleep", seconds):
            assert time.monotonic() < deadline, "the bash step never started"
            await asyncio.sleep(0.02)
        assert await client.command("agent.cancel") == {"cancelled": True}
        assert (await answer)["status"] == "cancelled"
        while running_argv("sleep", seconds):
            assert time.monotonic() < deadline, "bash still runs"
            await asyncio.sleep(0.02)
        api.fake.script(reply(text("next")))
        assert (await client.run_task("again"))["status"] == "done"
    # The cancelled call was answered, so the API took the next request.
    ((told, is_error),) = api.results(api.fake.requests[-1].body)
    assert is_error and "Cancelled" in told


async def test_rate_limits_and_server_errors_are_retried(api: Api, root: Path) -> None:
    api.fake.script(rate_limited(), server_error(), reply(text("made it")))
    async with editor(root, api.fake.url, env=api.env) as client:
        result = await client.run_task("go")
    assert (result["status"], result["summary"]) == ("done", "made it")
    assert len(api.fake.requests) == 3


async def test_usage_cache_hits_and_cost(api: Api, root: Path) -> None:
    for n in range(3):
        (root / f"f{n}.py").write_text(f"value = {n}\n" * 200)
    api.fake.script(
        *[reply(tool_use("read_file", {"path": f"f{n}.py"})) for n in range(3)],
        reply(text("done")),
    )
    async with editor(root, api.fake.url, env=api.env) as client:
        client.progress_reports["t"] = []
        result = await client.run_task("go", token="t")
        end = client.progress_reports["t"][-1]
    usage = result["usage"]
    counted = usage_of(result)
    billed = api.fake.billed
    assert (counted.input, counted.output, counted.cache_read, counted.cache_write) == (
        billed.input,
        billed.output,
        billed.cache_read,
        billed.cache_write,
    )
    assert counted.cache_read > 0  # later steps read the earlier ones from the cache
    price = price_of(api.model)
    assert price is not None and usage["model"] == api.model
    assert usage["costUsd"] == round(price.cost(counted), 6) > 0
    assert f"${price.cost(counted):.4f}" in end.message


def test_the_terminal_runs_with_the_openai_format_from_the_environment(root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    with FakeOpenAI() as fake:
        fake.script(
            reply(tool_use("edit_file", {"path": "app.py", "old_text": "hello", "new_text": "x"})),
            reply(text("Done.")),
        )
        done = subprocess.run(
            [sys.executable, "-m", "agentls", "run", "--yes", "--model", "gpt-4o-mini", "edit"],
            cwd=root,
            env={
                **os.environ,
                "AGENTLS_PROVIDER": "openai",
                "OPENAI_BASE_URL": fake.url,
                "OPENAI_API_KEY": "sk-test-openai-123",
                "XDG_CONFIG_HOME": str(root.parent / "config"),
                "NO_COLOR": "1",
            },
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert fake.requests[-1].body["model"] == "gpt-4o-mini"
    assert (root / "app.py").read_text() == SOURCE.replace("hello", "x")
    assert "done · 2 steps · 1 edit" in done.stdout and "$" in done.stdout


async def test_read_file_of_a_png_reaches_the_model_as_an_image(api: Api, root: Path) -> None:
    (root / "shot.png").write_bytes(png(64, 48))
    api.fake.script(reply(tool_use("read_file", {"path": "shot.png"})), reply(text("Red.")))
    async with editor(root, api.fake.url, env=api.env) as client:
        result = await client.run_task("what colour is shot.png?")
    assert (result["status"], result["summary"]) == ("done", "Red.")
    last = api.fake.requests[-1]
    (image,) = last.images
    assert image["media_type"] == "image/png"
    assert base64.b64decode(image["data"]) == (root / "shot.png").read_bytes()
    # Messages: inside the tool_result; Chat Completions: a user message after the results.
    assert image["where"] == ("user" if api.openai else "tool_result")
    ((told, is_error),) = api.results(last.body)
    told = told if isinstance(told, str) else told[0]["text"]
    assert not is_error and "PNG, 64x48 px" in told


async def test_run_task_images_reach_the_model(api: Api, root: Path) -> None:
    (root / "mock.png").write_bytes(png(20, 10))
    pasted = base64.b64encode(png(30, 10, (0, 0, 255))).decode()
    api.fake.script(reply(text("Two images.")))
    async with editor(root, api.fake.url, env=api.env) as client:
        result = await client.run_task(
            "compare them",
            images=[
                {"uri": (root / "mock.png").as_uri()},
                {"data": pasted, "mimeType": "image/png"},
            ],
        )
    assert result["status"] == "done"
    first, second = api.fake.requests[0].images
    assert base64.b64decode(first["data"]) == (root / "mock.png").read_bytes()
    assert second["data"] == pasted and first["where"] == second["where"] == "user"
