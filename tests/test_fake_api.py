"""The fake Messages API, exercised through the real anthropic SDK (never mocked).

If the fake drifts from what the SDK expects on the wire, every other test built on
it would be testing fiction; these tests pin the wire behaviour down.
"""

from __future__ import annotations

import asyncio
import json
import re
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from fake_api import (
    EXHAUSTED_MESSAGE,
    Billing,
    FakeAnthropic,
    Hang,
    Reply,
    auth_error,
    bad_request,
    compute_input_usage,
    estimate_tokens,
    fault,
    hang,
    malformed_tool_use,
    output_tokens,
    overloaded,
    rate_limited,
    reply,
    text,
    tool_use,
    turn_from_json,
)

MODEL = "claude-fake-1"
HI = [{"role": "user", "content": "hi"}]
TESTS = Path(__file__).parent


@pytest.fixture
async def aclient(fake: FakeAnthropic) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake.url, max_retries=2)
    yield client
    await client.close()


@pytest.fixture
def client(fake: FakeAnthropic) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key="test-key", base_url=fake.url, max_retries=2) as c:
        yield c


def http(url: str, payload: Any = None) -> Any:
    data = None if payload is None else json.dumps(payload).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


# ------------------------------------------------------------------ streaming


async def test_stream_text_deltas_in_order(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    words = "one two three four five six seven eight nine ten"
    fake.script(reply(text(words)))
    async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        deltas = [chunk async for chunk in stream.text_stream]
        final = await stream.get_final_message()

    assert len(deltas) > 1
    assert "".join(deltas) == words
    assert final.id == "msg_fake_1"
    assert final.model == MODEL
    assert [b.type for b in final.content] == ["text"]
    assert final.content[0].text == words
    assert final.stop_reason == "end_turn"
    assert final.usage.input_tokens > 0
    assert final.usage.output_tokens == output_tokens([text(words)])
    assert fake.requests[0].body["stream"] is True


async def test_stream_events_match_api_shape(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(reply("hello", tool_use("t", {"a": 1})))
    stream = await aclient.messages.create(model=MODEL, max_tokens=9, messages=HI, stream=True)
    events = [e async for e in stream]

    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 2
    start, delta = events[0], events[-2]
    assert start.message.content == [] and start.message.stop_reason is None
    assert start.message.usage.input_tokens > 0
    assert delta.delta.stop_reason == "tool_use"
    assert delta.usage.output_tokens == output_tokens([text("hello"), tool_use("t", {"a": 1})])
    # The SDK swallows pings; check on the wire that one is sent, as the API does.
    req = urllib.request.Request(
        fake.url + "/v1/messages",
        data=json.dumps({"model": MODEL, "max_tokens": 5, "messages": HI, "stream": True}).encode(),
        headers={"content-type": "application/json"},
    )
    fake.script(reply("x"))
    with urllib.request.urlopen(req, timeout=5) as resp:
        raw = resp.read().decode()
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert re.findall(r"^event: (\w+)$", raw, re.M) == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


async def test_tool_use_input_round_trips_through_json_deltas(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    tool_input = {"path": "src/é.py", "edits": [{"old": "a", "new": "b"}], "n": 3, "ok": True}
    fake.script(
        reply(text("Let me edit."), tool_use("edit", tool_input), tool_use("ls", id="mine"))
    )
    async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        partials = [
            e.delta.partial_json
            async for e in stream
            if e.type == "content_block_delta"
            and e.delta.type == "input_json_delta"
            and e.index == 1
        ]
        final = await stream.get_final_message()

    assert len([p for p in partials if p]) >= 3
    assert json.loads("".join(partials)) == tool_input
    edit, ls = final.content[1], final.content[2]
    assert (edit.type, edit.name, edit.id, edit.input) == (
        "tool_use",
        "edit",
        "toolu_fake_1",
        tool_input,
    )
    assert (ls.id, ls.input) == ("mine", {})
    assert final.stop_reason == "tool_use"


def test_sync_stream_and_explicit_stop_reason(
    fake: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    fake.script(reply("cut", stop_reason="max_tokens"), reply("no", stop_reason="refusal"))
    for expected in ("max_tokens", "refusal"):
        with client.messages.stream(model=MODEL, max_tokens=1, messages=HI) as stream:
            assert stream.get_final_message().stop_reason == expected


# -------------------------------------------------------------- non-streaming


def test_create_non_streaming(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script(reply(text("reading"), tool_use("read", {"path": "a.py"})), "plain")
    first = client.messages.create(model=MODEL, max_tokens=50, messages=HI)
    second = client.messages.create(model=MODEL, max_tokens=50, messages=HI)

    assert first.id == "msg_fake_1" and second.id == "msg_fake_2"
    assert first.model == MODEL
    assert first.stop_reason == "tool_use"
    assert first.content[0].text == "reading"
    assert first.content[1].input == {"path": "a.py"}
    assert first.content[1].id == "toolu_fake_1"
    assert second.stop_reason == "end_turn" and second.content[0].text == "plain"
    assert first.usage.output_tokens > 0 and first.usage.input_tokens > 0
    assert first.usage.cache_read_input_tokens == 0
    headers = fake.requests[0].headers
    # This SDK version authenticates with a bearer token; older ones sent x-api-key.
    assert "test-key" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert "anthropic-version" in headers
    assert "stream" not in fake.requests[0].body


# -------------------------------------------------------------------- faults


async def test_429_with_retry_after_ms_is_retried(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(rate_limited(retry_after_ms=10), reply("ok"))
    started = time.monotonic()
    msg = await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)

    assert msg.content[0].text == "ok"
    assert len(fake.requests) == 2
    assert fake.requests[1].headers.get("x-stainless-retry-count") == "1"
    assert time.monotonic() - started < 1  # honoured 10 ms, not the default backoff


async def test_529_overloaded_is_retried_in_stream(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(overloaded(), overloaded(), reply("finally"))
    async with aclient.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
        assert (await stream.get_final_text()) == "finally"
    assert len(fake.requests) == 3


async def test_401_raises_without_retry(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(auth_error(), reply("never"))
    with pytest.raises(anthropic.AuthenticationError) as info:
        await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert len(fake.requests) == 1
    assert info.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        "request_id": info.value.request_id,
    }


async def test_fault_headers_and_other_statuses(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(
        fault(500, "api_error", "boom", {"x-should-retry": "false", "x-extra": "1"}),
        bad_request("prompt is too long"),
    )
    with pytest.raises(anthropic.InternalServerError) as info:
        await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert info.value.response.headers["x-extra"] == "1"
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert len(fake.requests) == 2


async def test_script_exhausted_is_a_bad_request(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    with pytest.raises(anthropic.BadRequestError, match=EXHAUSTED_MESSAGE):
        await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert len(fake.requests) == 1


async def test_callable_turn_sees_request_body(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    def model(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"][0]
        return reply(f"tool said {last['content']}")

    fake.script(tool_use("read", {"path": "a"}, id="t1"), model)
    first = await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    messages = [
        *HI,
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}],
        },
    ]
    second = await aclient.messages.create(model=MODEL, max_tokens=5, messages=messages)
    assert second.content[0].text == "tool said 42"


async def test_callable_that_raises_is_reported(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(lambda body: 1 / 0)
    with pytest.raises(anthropic.BadRequestError, match="ZeroDivisionError"):
        await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert [type(e) for e in fake.errors] == [ZeroDivisionError]
    fake.reset()


async def test_unpaired_tool_use_is_rejected_like_the_api(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script("unused")
    messages = [
        *HI,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t9", "name": "x", "input": {}}],
        },
        {"role": "user", "content": "forgot the result"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="t9"):
        await aclient.messages.create(model=MODEL, max_tokens=5, messages=messages)
    assert fake.pending == 1  # a rejected request does not consume the script


# ------------------------------------------------------------- stream faults


async def test_drop_mid_stream_raises_from_sdk_stream(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(reply("a b c d e f g h i j k l", drop_after=4))
    seen: list[str] = []
    with pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)):
        async with aclient.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
            async for event in stream:
                seen.append(event.type)
    assert "message_start" in seen and "message_stop" not in seen


async def test_stream_ending_without_message_stop(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(reply("partial", omit_message_stop=True), reply("x y z", end_after=3))
    for _ in range(2):
        stream = await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI, stream=True)
        kinds = [e.type async for e in stream]
        assert "message_stop" not in kinds
    assert kinds == ["message_start", "content_block_start"]  # ping is the SDK-hidden third


async def test_malformed_tool_json_fails_in_sdk(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script(reply(malformed_tool_use("edit")))
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        async with aclient.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
            await stream.get_final_message()


async def test_hang_times_out_without_blocking_others(fake: FakeAnthropic) -> None:
    fake.script(hang(30), reply("meanwhile"))
    slow = anthropic.AsyncAnthropic(
        api_key="k", base_url=fake.url, max_retries=0, timeout=httpx2.Timeout(0.3, connect=2)
    )
    fast = anthropic.AsyncAnthropic(api_key="k", base_url=fake.url, max_retries=0)
    try:
        hung = asyncio.create_task(slow.messages.create(model=MODEL, max_tokens=5, messages=HI))
        await asyncio.to_thread(fake.wait_for_requests, 1)
        other = await fast.messages.create(model=MODEL, max_tokens=5, messages=HI)
        assert other.content[0].text == "meanwhile"
        assert not hung.done()
        with pytest.raises(anthropic.APITimeoutError):
            await hung
    finally:
        await slow.close()
        await fast.close()


def test_stop_is_prompt_while_a_request_hangs() -> None:
    fake = FakeAnthropic().start()
    fake.script(hang(60))
    threading.Timer(0.2, fake.stop).start()
    started = time.monotonic()
    # Stopping closes the hung connection instead of leaving the client waiting.
    with (
        anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0) as client,
        pytest.raises(anthropic.APIConnectionError),
    ):
        client.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert time.monotonic() - started < 2


async def test_delays_and_hang_then(fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic) -> None:
    fake.script(
        Hang(0.1, reply("late")),
        reply("a b c d e f g h i", event_delay=0.03),
        reply("slow", delay=2),
    )
    started = time.monotonic()
    assert (await aclient.messages.create(model=MODEL, max_tokens=5, messages=HI)).content[
        0
    ].text == "late"
    assert time.monotonic() - started >= 0.1

    started = time.monotonic()
    async with aclient.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
        await stream.get_final_message()
    assert time.monotonic() - started >= 0.03 * 8  # one wait per event after the first

    with pytest.raises(anthropic.APITimeoutError):
        await aclient.with_options(timeout=0.2, max_retries=0).messages.create(
            model=MODEL, max_tokens=5, messages=HI
        )


# ---------------------------------------------------------- token accounting


def big_system(chars: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": "x" * chars, "cache_control": {"type": "ephemeral"}}]


def test_cache_write_then_read_via_sdk(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script("one", "two")
    system = big_system(4 * 1100)
    first = client.messages.create(model=MODEL, max_tokens=5, system=system, messages=HI)
    second = client.messages.create(
        model=MODEL,
        max_tokens=5,
        system=system,
        messages=[
            *HI,
            {"role": "assistant", "content": "one"},
            {"role": "user", "content": "more"},
        ],
    )

    assert first.usage.cache_creation_input_tokens >= 1100
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0
    assert 0 < second.usage.input_tokens < 50
    billed = fake.billed
    assert billed.cache_write == first.usage.cache_creation_input_tokens
    assert billed.cache_read == second.usage.cache_read_input_tokens
    assert billed.input == first.usage.input_tokens + second.usage.input_tokens
    assert billed.output == first.usage.output_tokens + second.usage.output_tokens
    assert fake.reset_billed() == billed
    assert fake.billed.input == 0


async def test_stream_reports_cache_usage(
    fake: FakeAnthropic, aclient: anthropic.AsyncAnthropic
) -> None:
    fake.script("a", "b")
    for _ in range(2):
        async with aclient.messages.stream(
            model=MODEL, max_tokens=5, system=big_system(4 * 1100), messages=HI
        ) as stream:
            usage = (await stream.get_final_message()).usage
    assert usage.cache_read_input_tokens >= 1100 and usage.cache_creation_input_tokens == 0


def test_below_minimum_prefix_caches_nothing(
    fake: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    fake.script("a", "b")
    for _ in range(2):
        usage = client.messages.create(
            model=MODEL, max_tokens=5, system=big_system(4 * 1000), messages=HI
        ).usage
        assert usage.cache_creation_input_tokens == 0
        assert usage.cache_read_input_tokens == 0


def blocks_body(n: int, breakpoint: int) -> dict[str, Any]:
    content = [
        {"type": "text", "text": f"block {i} " + "y" * 40}
        | ({"cache_control": {"type": "ephemeral"}} if i == breakpoint else {})
        for i in range(n)
    ]
    return {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": content}]}


@pytest.mark.parametrize(("moved_by", "hit"), [(0, True), (20, True), (21, False)])
def test_cache_lookback_is_twenty_blocks(moved_by: int, hit: bool) -> None:
    first, keys = compute_input_usage(blocks_body(40, 5), set(), min_cacheable_tokens=1)
    assert first.cache_creation_input_tokens > 0 and keys
    later, _ = compute_input_usage(blocks_body(40, 5 + moved_by), keys, min_cacheable_tokens=1)
    if hit:
        assert later.cache_read_input_tokens == first.cache_creation_input_tokens
        assert (
            later.cache_creation_input_tokens
            == later.total - later.cache_read_input_tokens - later.input_tokens
        )
    else:
        assert later.cache_read_input_tokens == 0
    assert later.total == first.total  # the split changes, the prompt size does not


def test_usage_split_and_cache_key_rules() -> None:
    body = blocks_body(10, 9)
    body["tools"] = [{"name": "t", "input_schema": {"type": "object"}}]
    usage, keys = compute_input_usage(body, set(), min_cacheable_tokens=1)
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (0, 0)
    # Tools come first in the prefix: changing one invalidates the cached prefix.
    changed = {**body, "tools": [{"name": "u", "input_schema": {"type": "object"}}]}
    assert (
        compute_input_usage(changed, keys, min_cacheable_tokens=1)[0].cache_read_input_tokens == 0
    )
    # The cache is per model.
    other = {**body, "model": "other"}
    assert compute_input_usage(other, keys, min_cacheable_tokens=1)[0].cache_read_input_tokens == 0
    # Content after the last breakpoint is plain input.
    longer = {**body, "messages": [*body["messages"], {"role": "assistant", "content": "z" * 400}]}
    again, _ = compute_input_usage(longer, keys, min_cacheable_tokens=1)
    assert again.cache_read_input_tokens == usage.cache_creation_input_tokens
    assert again.input_tokens >= estimate_tokens(400)


def test_billed_input_weighs_cache_writes_and_reads() -> None:
    billed = Billing(input=100, cache_read=1000, cache_write=400, output=7)
    assert billed.billed_input == 100 + 0.1 * 1000 + 1.25 * 400


def test_requests_record_when_they_arrived(
    fake: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    fake.script("one", "two")
    before = time.monotonic()
    for _ in range(2):
        client.messages.create(model=MODEL, max_tokens=5, messages=HI)
    first, second = fake.requests
    assert before <= first.received <= second.received <= time.monotonic()


def test_too_many_breakpoints_rejected(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script("unused")
    body = blocks_body(6, -1)
    for block in body["messages"][0]["content"][:5]:
        block["cache_control"] = {"type": "ephemeral"}
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
        client.messages.create(**body)


# ----------------------------------------------------- control endpoints & CLI


def test_http_control_endpoints(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    assert http(
        fake.url + "/_fake/script", [{"text": "hi"}, {"hang": 0, "then": {"text": "x"}}]
    ) == {
        "queued": 2,
        "pending": 2,
    }
    assert client.messages.create(model=MODEL, max_tokens=5, messages=HI).content[0].text == "hi"
    assert http(fake.url + "/_fake/requests") == [{"model": MODEL, "max_tokens": 5, "messages": HI}]
    assert http(fake.url + "/_fake/billed")["output"] > 0
    assert http(fake.url + "/_fake/reset", {}) == {"ok": True}
    assert fake.requests == [] and fake.pending == 0
    with pytest.raises(urllib.error.HTTPError) as info:
        http(fake.url + "/_fake/script", [{"bogus": 1}])
    assert info.value.code == 400


def test_json_turn_form() -> None:
    turn = turn_from_json(
        {
            "content": [{"text": "a"}, {"tool_use": {"name": "n", "input": {"k": 1}, "id": "i"}}],
            "stop_reason": "max_tokens",
            "drop_after": 3,
        }
    )
    assert turn == reply(
        text("a"), tool_use("n", {"k": 1}, id="i"), stop_reason="max_tokens", drop_after=3
    )
    assert turn_from_json({"tool_use": {"name": "n", "raw_json": "{"}}).content[0].raw_json == "{"
    limited = turn_from_json(
        {
            "fault": {
                "status": 429,
                "type": "rate_limit_error",
                "message": "m",
                "headers": {"retry-after": "0"},
            }
        }
    )
    assert limited == fault(429, "rate_limit_error", "m", {"retry-after": "0"})
    assert turn_from_json({"hang": 1.5}) == Hang(1.5)
    for bad in ([], {"text": 1}, {"fault": {"status": 500}}, {"content": [{"image": 1}]}):
        with pytest.raises(ValueError):
            turn_from_json(bad)


def _cli(*arguments: str) -> tuple[subprocess.Popen[str], str]:
    """`python -m fake_api ARGUMENTS` started, and the URL its first line says it serves."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fake_api", *arguments],
        cwd=TESTS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 10)
        assert ready, "fake API CLI printed nothing"
        line = proc.stdout.readline()
        match = re.fullmatch(r"listening on (http://127\.0\.0\.1:\d+)\n", line)
        assert match, line
    except BaseException:
        proc.kill()
        raise
    return proc, match.group(1)


def test_cli_prints_url_and_serves_posted_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from file"}]))
    proc, url = _cli("--port", "0", "--script", str(script))
    try:
        http(url + "/_fake/script", [{"content": [{"tool_use": {"name": "t", "input": {"q": 1}}}]}])
        with anthropic.Anthropic(api_key="k", base_url=url, max_retries=0) as client:
            first = client.messages.create(model=MODEL, max_tokens=5, messages=HI)
            with client.messages.stream(model=MODEL, max_tokens=5, messages=HI) as stream:
                second = stream.get_final_message()
        assert first.content[0].text == "from file"
        assert second.content[0].input == {"q": 1} and second.stop_reason == "tool_use"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=5)
    assert proc.returncode == 0
    assert out == "" and err == ""  # quiet: no request log


def test_cli_serves_the_completions_fake_and_lists_what_it_was_asked() -> None:
    """`--format completions` for the VS Code e2e test: every route answers `--answer`."""
    proc, url = _cli("--format", "completions", "--answer", "a*b")
    try:
        asked = {"model": "m", "prompt": "x = ", "suffix": "\n", "max_tokens": 8}
        answer = http(url + "/v1/completions", asked)
        assert answer["choices"][0]["text"] == "a*b"
        assert http(url + "/infill", {"input_prefix": "x = "})["content"] == "a*b"
        with urllib.request.urlopen(url + "/_fake/requests", timeout=5) as response:
            seen = json.loads(response.read())
        assert seen == [
            {"path": "/v1/completions", "body": asked},
            {"path": "/infill", "body": {"input_prefix": "x = "}},
        ]
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=5)
    assert proc.returncode == 0
    assert err == ""
