"""The real server against a failing, slow or cramped Messages API: every fault either
recovers or ends the task with a clear message, and the server goes on serving."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from agentls.agent.compaction import COMPACTED
from agentls.models.costs import price_of
from doubles import usage_of
from editor_client import editor
from fake_api import (
    FakeAnthropic,
    auth_error,
    hang,
    malformed_tool_use,
    overloaded,
    rate_limited,
    reply,
    server_error,
    text,
    tool_use,
)
from lsprotocol import types

RECOVERABLE = {
    "429 with retry-after": rate_limited(retry_after_ms=1000),
    "529 overloaded": overloaded(),
    "500": server_error(),
    "connection dropped mid-stream": reply(text("half an ans"), drop_after=3),
    "stream ended early": reply(text("half an ans"), end_after=3),
    "malformed tool-input JSON": reply(malformed_tool_use("read_file")),
}


async def test_each_transient_fault_recovers_on_one_server(fake: FakeAnthropic, root: Path) -> None:
    async with editor(root, fake.url) as client:
        for name, fault in RECOVERABLE.items():
            fake.script(fault, reply(text(f"recovered from {name}")))
            started = time.monotonic()
            result = await client.run_task("go")
            assert (result["status"], result["summary"]) == ("done", f"recovered from {name}")
            if name == "429 with retry-after":
                assert time.monotonic() - started >= 1.0, "retry-after was not honoured"
        fake.script(reply(text("all"), omit_message_stop=True))
        assert (await client.run_task("go"))["summary"] == "all"
    assert not [m for m in client.messages if m.type == types.MessageType.Error]


@pytest.mark.parametrize(
    ("faults", "expected"),
    [
        ([server_error()] * 5, "The API failed after 4 retries (500)."),
        ([auth_error()], "The API key was refused (401)."),
        ([reply(text("x"), drop_after=3)] * 3, "broke off"),
    ],
    ids=["500-persists", "401", "stream-keeps-dropping"],
)
async def test_a_lasting_fault_fails_the_task_clearly_and_the_server_goes_on(
    fake: FakeAnthropic, root: Path, faults: list[Any], expected: str
) -> None:
    async with editor(root, fake.url) as client:
        fake.script(*faults)
        result = await client.run_task("go")
        assert result["status"] == "failed" and expected in result["summary"]
        (error,) = [m for m in client.messages if m.type == types.MessageType.Error]
        assert expected in error.message and "test-key-123" not in error.message
        fake.script(reply(text("still here")))
        assert (await client.run_task("again"))["summary"] == "still here"
    # The failed task's note keeps the conversation valid for the next one.
    assert fake.requests[-1].body["messages"][-1]["content"][-1]["text"] == "again"


async def test_a_hung_api_times_out_per_the_setting_and_recovers(
    fake: FakeAnthropic, root: Path
) -> None:
    fake.script(hang(60), reply(text("late but here")))
    async with editor(root, fake.url, settings={"requestTimeout": 1}) as client:
        started = time.monotonic()
        result = await client.run_task("go")
    assert (result["status"], result["summary"]) == ("done", "late but here")
    assert time.monotonic() - started < 30


def _read_every_step(steps: int) -> Any:
    """A model that reads a 6 KB file at each step, then answers with what it last saw."""
    count = 0

    def turn(body: dict[str, Any]) -> Any:
        nonlocal count
        count += 1
        if count > steps:
            last = body["messages"][-1]["content"][-1]["content"]
            return reply(text(f"last result {len(last)} chars"))
        return reply(tool_use("read_file", {"path": f"f{count % 3}.txt"}))

    return turn


@pytest.mark.parametrize(
    "settings",
    [{"contextWindow": 12_000}, {}],
    ids=["budget-from-settings", "window-smaller-than-the-settings-say"],
)
async def test_a_long_task_never_dies_of_an_over_long_prompt(
    root: Path, settings: dict[str, Any]
) -> None:
    for name in ("f0.txt", "f1.txt", "f2.txt"):
        (root / name).write_text("".join(f"line {i:05d} of {name}\n" for i in range(300)))
    steps = 30
    with FakeAnthropic(context_window=12_000) as fake:
        fake.script(*[_read_every_step(steps)] * (steps + 1))
        async with editor(root, fake.url, settings={"maxSteps": 40, **settings}) as client:
            result = await client.run_task("read them all")
        # Each file is about 2,000 tokens; 30 reads are five times the window.
        assert result["status"] == "done", result
        assert result["summary"].startswith("last result") and "[elided" not in result["summary"]
        final = fake.requests[-1].body["messages"]
        elided = [b for m in final for b in m["content"] if "[elided" in str(b.get("content", ""))]
        assert elided, "old results should have been elided"
        refused = len(fake.requests) - (steps + 1)
        if settings:
            assert refused == 0, "the budget should keep every prompt within the window"
        else:
            assert refused >= 1, "only the API's refusals could have made the loop cut"


async def test_compact_replaces_the_conversation_with_the_models_summary(
    fake: FakeAnthropic, root: Path
) -> None:
    (root / "a.py").write_text("x = 1\n")
    fake.script(reply(tool_use("read_file", {"path": "a.py"})), reply(text("x is 1")))
    async with editor(root, fake.url) as client:
        await client.run_task("what is x?")
        fake.script(reply(text("The user asked about x in a.py; it is 1.")))
        result = await client.command("agent.compact")
        fake.script(reply(text("ok")))
        await client.run_task("and now?")
    assert result["status"] == "done" and result["messages"] == {"before": 4, "after": 1}
    assert result["summary"] == "The user asked about x in a.py; it is 1."
    asked = fake.requests[2].body
    assert asked["tools"] == fake.requests[0].body["tools"], "same prefix, so the cache hits"
    assert "Summarise our conversation" in asked["messages"][-1]["content"][-1]["text"]
    first = fake.requests[3].body["messages"]
    assert len(first) == 1 and first[0]["content"][0]["text"].startswith(COMPACTED)
    assert first[0]["content"][-1]["text"].endswith("and now?")


async def test_compact_that_fails_keeps_the_conversation(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("hello")))
    async with editor(root, fake.url) as client:
        await client.run_task("hi")
        fake.script(auth_error())
        result = await client.command("agent.compact")
        fake.script(reply(text("ok")))
        await client.run_task("again")
    assert result["status"] == "failed" and result["messages"] == {"before": 2, "after": 2}
    assert [m["role"] for m in fake.requests[-1].body["messages"]] == ["user", "assistant", "user"]


async def test_usage_and_cost_in_the_result_and_the_progress_end(
    fake: FakeAnthropic, root: Path
) -> None:
    fake.script(reply(tool_use("list_files", {})), reply(text("done")))
    async with editor(root, fake.url, initialization={"model": "claude-sonnet-4-5"}) as client:
        client.progress_reports["t"] = []
        result = await client.run_task("go", token="t")
        end = client.progress_reports["t"][-1]
    usage = result["usage"]
    counted = usage_of(result)
    billed = fake.billed
    assert (counted.input, counted.output) == (billed.input, billed.output)
    price = price_of("claude-sonnet-4-5")
    assert price is not None and usage["model"] == "claude-sonnet-4-5"
    assert usage["costUsd"] == round(price.cost(counted), 6) > 0
    assert usage["cacheHitRate"] == round(counted.cache_hit_rate, 4)
    assert isinstance(end, types.WorkDoneProgressEnd) and "cached" in end.message
    assert f"${price.cost(counted):.4f}" in end.message


async def test_unpriced_models_get_no_guessed_cost_unless_the_settings_price_them(
    fake: FakeAnthropic, root: Path
) -> None:
    fake.script(reply(text("a")), reply(text("b")))
    prices = {"prices": {"local-": {"input": 1, "output": 2}}}
    async with editor(root, fake.url, initialization={"model": "local-model"}) as client:
        unpriced = await client.run_task("go")
    async with editor(root, fake.url, initialization={"model": "local-model", **prices}) as client:
        priced = await client.run_task("go")
    assert unpriced["usage"]["costUsd"] is None
    assert priced["usage"]["costUsd"] > 0
