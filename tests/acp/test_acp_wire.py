"""`agentls acp` on the raw wire against the fake Messages API, every message it sends checked
against the official v1 schema (`acp_wire`): signing in and out, the capabilities, the
config options, the context meter, and sessions resumed, closed and deleted."""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_wire import AcpError, AcpWire
from agentls.models.costs import price_of
from agentls.models.providers import DEFAULT_MODEL
from fake_api import FakeAnthropic, hang, reply, text, tool_use

KEY = "sk-ant-test-0123456789"
OTHER_MODEL = "claude-opus-4-5"


def _environment(fake: FakeAnthropic, config: Path, key: bool) -> dict[str, str]:
    """The agent's environment: the runner's, without any provider's key or choice; with
    `key`, the key and the fake's URL, else neither (a key in the config `.env` goes to the
    endpoint set beside it, never to one from another source)."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_AUTH_TOKEN", "_BASE_URL")) and not k.startswith("AGENTLS_")
    }
    env = {**base, "XDG_CONFIG_HOME": str(config)}
    if key:
        env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake.url)
    return env


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def start(fake: FakeAnthropic, config: Path, root: Path) -> Iterator[Any]:
    """Start agents: `start(key=True)`; each is closed at the end."""
    started: list[AcpWire] = []

    def make(key: bool = True) -> AcpWire:
        wire = AcpWire(_environment(fake, config, key), root)
        started.append(wire)
        return wire

    yield make
    for wire in started:
        wire.close()


def _session(wire: AcpWire, root: Path, capabilities: dict[str, Any] | None = None) -> str:
    wire.initialize(capabilities)
    session_id: str = wire.request("session/new", {"cwd": str(root), "mcpServers": []})["sessionId"]
    return session_id


def _prompt(wire: AcpWire, session_id: str, words: str) -> dict[str, Any]:
    return wire.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": words}]}
    )


def _options(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {option["id"]: option for option in answer["configOptions"]}


# Signing in


@pytest.mark.parametrize(
    ("capabilities", "terminal"),
    [
        pytest.param({}, False, id="no-terminal"),
        pytest.param({"auth": {"terminal": False}}, False, id="terminal-false"),
        pytest.param({"auth": {"terminal": True}}, True, id="auth-terminal"),
        pytest.param({"_meta": {"terminal-auth": True}}, True, id="legacy-meta"),
    ],
)
def test_the_auth_methods_follow_the_clients_capability(
    start: Any, capabilities: dict[str, Any], terminal: bool
) -> None:
    answer = start().initialize(capabilities)
    methods = {method["id"]: method for method in answer["authMethods"]}
    assert methods["agentls-key"].get("type", "agent") == "agent"
    if terminal:
        assert methods["agentls-login"]["type"] == "terminal"
        assert methods["agentls-login"]["args"] == ["--login"]
    assert set(methods) == ({"agentls-key", "agentls-login"} if terminal else {"agentls-key"})


def test_the_capabilities_advertise_what_is_routed(start: Any) -> None:
    from agentls import __version__

    capabilities = start().initialize()
    agent = capabilities["agentCapabilities"]
    assert agent["loadSession"] is True
    assert agent["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "delete": {}}
    assert agent["auth"] == {"logout": {}}
    assert agent["promptCapabilities"]["image"] is True
    assert agent["promptCapabilities"]["embeddedContext"] is True
    assert capabilities["agentInfo"]["version"] == __version__


def test_without_a_key_authenticate_and_prompt_say_auth_required(
    start: Any, fake: FakeAnthropic, root: Path
) -> None:
    wire = start(key=False)
    session_id = _session(wire, root)
    with pytest.raises(AcpError) as refused:
        wire.request("authenticate", {"methodId": "agentls-key"})
    assert refused.value.code == -32000
    assert "ANTHROPIC_API_KEY" in refused.value.message
    with pytest.raises(AcpError) as prompted:
        _prompt(wire, session_id, "hello")
    assert prompted.value.code == -32000
    assert fake.requests == [], "no model request without a key"


def test_with_a_key_authenticate_answers_empty(start: Any) -> None:
    wire = start()
    wire.initialize()
    assert wire.request("authenticate", {"methodId": "agentls-key"}) == {}
    with pytest.raises(AcpError) as terminal:
        wire.request("authenticate", {"methodId": "agentls-login"})
    assert terminal.value.code == -32602


PROVIDER = b"[anthropic]: "
HIDDEN = b"not shown): "


def _login(config: Path, typed: list[tuple[bytes, bytes]], fake: FakeAnthropic) -> tuple[int, str]:
    """Run `agentls acp --login` in a pseudo-terminal, typing each answer once its question
    (the first of the pair) is on the screen."""
    import pty
    import select
    import subprocess
    import sys

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "acp", "--login"],
        env=_environment(fake, config, key=False),
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    seen = b""
    pending = list(typed)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: the program is done
                break
            if not chunk:
                break
            seen += chunk
            if pending and seen.endswith(pending[0][0]):
                os.write(leader, pending.pop(0)[1])
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=30), seen.decode(errors="replace")


def test_login_in_a_terminal_keeps_the_key_the_next_agent_uses(
    start: Any, fake: FakeAnthropic, config: Path, root: Path
) -> None:
    config.mkdir(mode=0o755)
    (config / "agentls").mkdir(mode=0o755)
    (config / "agentls" / ".env").write_text(f"# mine\nANTHROPIC_BASE_URL={fake.url}\n")
    status, screen = _login(config, [(PROVIDER, b"\n"), (HIDDEN, KEY.encode() + b"\n")], fake)
    assert status == 0, screen
    assert KEY not in screen, "the key is not echoed"
    dot_env = config / "agentls" / ".env"
    assert stat.S_IMODE(dot_env.stat().st_mode) == 0o600
    assert stat.S_IMODE(dot_env.parent.stat().st_mode) == 0o700
    assert dot_env.read_text().splitlines()[:2] == ["# mine", f"ANTHROPIC_BASE_URL={fake.url}"]

    fake.script(reply(text("Signed in.")))
    wire = start(key=False)
    session_id = _session(wire, root, {"auth": {"terminal": True}})
    assert wire.request("authenticate", {"methodId": "agentls-key"}) == {}
    assert _prompt(wire, session_id, "hi")["stopReason"] == "end_turn"
    sent = fake.requests[-1].headers
    assert KEY in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))


def test_login_with_no_key_fails_and_writes_nothing(fake: FakeAnthropic, config: Path) -> None:
    status, screen = _login(config, [(PROVIDER, b"anthropic\n"), (HIDDEN, b"\n")], fake)
    assert status != 0, screen
    assert not (config / "agentls" / ".env").exists()


def test_logout_removes_the_providers_key_lines(
    start: Any, fake: FakeAnthropic, config: Path, root: Path
) -> None:
    (config / "agentls").mkdir(parents=True)
    dot_env = config / "agentls" / ".env"
    dot_env.write_text(f"OPENAI_API_KEY=sk-other\nANTHROPIC_API_KEY={KEY}\nexport X=1\n")
    wire = start(key=False)
    session_id = _session(wire, root)
    assert wire.request("authenticate", {"methodId": "agentls-key"}) == {}
    assert wire.request("logout", {}) == {}
    assert dot_env.read_text() == "OPENAI_API_KEY=sk-other\nexport X=1\n"
    with pytest.raises(AcpError) as prompted:
        _prompt(wire, session_id, "hello")
    assert prompted.value.code == -32000
    assert fake.requests == []


# Config options


def _settings(config: Path, **values: Any) -> None:
    (config / "agentls").mkdir(parents=True, exist_ok=True)
    (config / "agentls" / "settings.json").write_text(json.dumps(values))


def _check_options(answer: dict[str, Any], model: str, mode: str) -> None:
    options = _options(answer)
    assert list(options) == ["model", "mode"]
    assert options["model"]["category"] == "model"
    assert options["model"]["currentValue"] == model
    assert [o["value"] for o in options["model"]["options"]] == list(
        dict.fromkeys([model, DEFAULT_MODEL, OTHER_MODEL])
    )
    assert options["mode"]["category"] == "mode"
    assert options["mode"]["currentValue"] == mode
    modes = ["default", "acceptEdits", "plan", "always"]
    assert [o["value"] for o in options["mode"]["options"]] == modes
    if "modes" in answer:  # the same modes, the same current one
        assert [m["id"] for m in answer["modes"]["availableModes"]] == modes
        assert answer["modes"]["currentModeId"] == mode


def test_the_options_on_new_load_and_resume_and_a_model_switch(
    start: Any, fake: FakeAnthropic, config: Path, root: Path
) -> None:
    _settings(config, models=[OTHER_MODEL])
    wire = start()
    wire.initialize()
    new = wire.request("session/new", {"cwd": str(root), "mcpServers": []})
    _check_options(new, DEFAULT_MODEL, "default")
    session_id = new["sessionId"]

    switched = wire.request(
        "session/set_config_option",
        {"sessionId": session_id, "configId": "model", "value": OTHER_MODEL},
    )
    _check_options(switched, OTHER_MODEL, "default")
    fake.script(reply(text("On the other model.")))
    _prompt(wire, session_id, "which model?")
    assert fake.requests[-1].body["model"] == OTHER_MODEL

    for wrong in ({"configId": "colour", "value": "red"}, {"configId": "model", "value": "x"}):
        with pytest.raises(AcpError) as refused:
            wire.request("session/set_config_option", {"sessionId": session_id, **wrong})
        assert refused.value.code == -32602

    other = start()
    other.initialize()
    where = {"sessionId": session_id, "cwd": str(root), "mcpServers": []}
    _check_options(other.request("session/load", where), DEFAULT_MODEL, "default")
    _check_options(other.request("session/resume", where), DEFAULT_MODEL, "default")


def test_plan_mode_offers_no_edit_tool_and_writes_nothing(
    start: Any, fake: FakeAnthropic, root: Path
) -> None:
    wire = start()
    session_id = _session(wire, root)
    answer = wire.request(
        "session/set_config_option",
        {"sessionId": session_id, "configId": "mode", "value": "plan"},
    )
    assert _options(answer)["mode"]["currentValue"] == "plan"
    fake.script(
        reply(tool_use("write_file", {"path": "new.py", "content": "x = 1\n"})),
        reply(text("I only plan here.")),
    )
    _prompt(wire, session_id, "write new.py")
    offered = {tool["name"] for tool in fake.requests[0].body["tools"]}
    assert "exit_plan_mode" in offered
    assert not offered & {"write_file", "edit_file", "bash"}
    assert not (root / "new.py").exists()


def test_an_approved_plan_moves_both_mode_pickers(
    start: Any, fake: FakeAnthropic, root: Path
) -> None:
    wire = start()
    session_id = _session(wire, root)
    wire.request("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
    fake.script(
        reply(tool_use("exit_plan_mode", {"plan": "1. Say hello."})),
        reply(text("Hello.")),
    )
    _prompt(wire, session_id, "plan a greeting")
    (moved,) = wire.updates("current_mode_update", session_id)
    assert moved["currentModeId"] == "default"
    (options,) = wire.updates("config_option_update", session_id)
    assert _options(options)["mode"]["currentValue"] == "default"


# The context meter


_COST = re.compile(r"\$(\d+\.\d+)$")


def test_usage_update_agrees_with_the_outcome(start: Any, fake: FakeAnthropic, root: Path) -> None:
    (root / "notes.txt").write_text("some notes\n" * 200)
    wire = start()
    session_id = _session(wire, root)
    outcomes = []
    for words in ("read notes.txt", "again"):
        fake.script(
            reply(tool_use("read_file", {"path": "notes.txt"})),
            lambda body: (fake.reset_billed(), reply(text("Read.")))[1],
        )
        answer = _prompt(wire, session_id, words)
        outcomes.append(answer["_meta"]["agentls"]["outcome"])
        last = fake.billed
        meter = wire.updates("usage_update", session_id)[-1]
        used = last.input + last.cache_read + last.cache_write + last.output
        assert abs(meter["used"] - used) <= 0.02 * used, (meter, last)
        assert meter["size"] == 200_000
    costs = [float(match.group(1)) for o in outcomes if (match := _COST.search(o))]
    assert len(costs) == 2 and price_of(DEFAULT_MODEL) is not None
    meter = wire.updates("usage_update", session_id)[-1]
    assert meter["cost"]["currency"] == "USD"
    assert abs(meter["cost"]["amount"] - sum(costs)) <= 0.01 * sum(costs)


def test_a_cancel_before_the_reply_leaves_the_meter_as_it_was(
    start: Any, fake: FakeAnthropic, root: Path
) -> None:
    wire = start()
    session_id = _session(wire, root)
    fake.script(reply(text("First.")), hang(60))
    _prompt(wire, session_id, "one")
    (before,) = wire.updates("usage_update", session_id)
    assert before["used"] > 0
    prompt = wire.send(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "two"}]}
    )
    fake.wait_for_requests(2, timeout=30)
    wire.notify("session/cancel", {"sessionId": session_id})
    assert wire.wait(prompt, timeout=30)["stopReason"] == "cancelled"
    after = wire.updates("usage_update", session_id)[-1]
    assert after["used"] == before["used"]
    assert after["cost"] == before["cost"]


# Sessions resumed, closed and deleted


def _saved_session(start: Any, fake: FakeAnthropic, root: Path) -> str:
    wire = start()
    session_id = _session(wire, root)
    fake.script(reply(text("Noted: the word is heron.")))
    _prompt(wire, session_id, "remember the word heron")
    wire.close()
    return session_id


def test_resume_replays_nothing_and_goes_on(start: Any, fake: FakeAnthropic, root: Path) -> None:
    session_id = _saved_session(start, fake, root)
    wire = start()
    wire.initialize()
    wire.request("session/resume", {"sessionId": session_id, "cwd": str(root), "mcpServers": []})
    fake.script(reply(text("heron")))
    _prompt(wire, session_id, "which word?")
    said = wire.updates("user_message_chunk") + [
        u for u in wire.updates("agent_message_chunk") if "Noted" in u["content"]["text"]
    ]
    assert said == [], "resume replays nothing"
    assert "remember the word heron" in json.dumps(fake.requests[-1].body["messages"])


def _running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in command and b"bash" not in command.split(b"\0")[0]:
                found.append(int(entry.name))
    return found


def test_close_ends_a_running_command_and_the_session(
    start: Any, fake: FakeAnthropic, root: Path
) -> None:
    marker = f"{time.time_ns() % 10**6}.5"
    wire = start()
    session_id = _session(wire, root)
    wire.request("session/set_mode", {"sessionId": session_id, "modeId": "always"})
    fake.script(reply(tool_use("bash", {"command": f"sleep {marker}"})), reply(text("late")))
    prompt = wire.send(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    deadline = time.monotonic() + 60
    while not _running(marker):
        assert time.monotonic() < deadline, f"the command never started: {wire.stderr}"
        time.sleep(0.1)
    closed_at = time.monotonic()
    close = wire.send("session/close", {"sessionId": session_id})
    assert wire.wait(prompt, timeout=10)["stopReason"] == "cancelled"
    assert wire.wait(close, timeout=10) == {}
    assert time.monotonic() - closed_at < 10
    assert _running(marker) == [], "the command is gone"
    with pytest.raises(AcpError):
        _prompt(wire, session_id, "more")


def test_delete_removes_the_session_from_the_list_and_the_disk(
    start: Any, fake: FakeAnthropic, root: Path, state_home: Path
) -> None:
    session_id = _saved_session(start, fake, root)
    wire = start()
    wire.initialize()
    listed = wire.request("session/list", {"cwd": str(root)})["sessions"]
    assert [s["sessionId"] for s in listed] == [session_id]
    where = {"sessionId": session_id, "cwd": str(root), "mcpServers": []}
    wire.request("session/load", where)  # replayed as today
    assert wire.updates("user_message_chunk", session_id)
    assert list(state_home.rglob(f"{session_id}.jsonl"))

    assert wire.request("session/delete", {"sessionId": session_id}) == {}
    assert wire.request("session/list", {"cwd": str(root)})["sessions"] == []
    assert list(state_home.rglob(f"{session_id}.jsonl")) == []
    with pytest.raises(AcpError):
        wire.request("session/load", where)


def test_the_client_closing_its_input_mid_prompt_ends_the_agent(
    start: Any, fake: FakeAnthropic, root: Path
) -> None:
    """An editor that quits while a prompt waits on the model: the agent leaves promptly
    (the prompt cancelled), rather than waiting on the model's answer."""
    wire = start()
    session_id = _session(wire, root)
    fake.script(hang(60))
    wire.send(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "one"}]}
    )
    fake.wait_for_requests(1, timeout=30)
    assert wire.process.stdin is not None
    wire.process.stdin.close()
    began = time.monotonic()
    wire.process.wait(timeout=20)
    assert time.monotonic() - began < 10, wire.stderr


class _Gone(Exception):
    """The test's client quits instead of answering."""


def test_the_client_closing_its_input_at_a_permission_question_ends_the_agent(
    start: Any, fake: FakeAnthropic, root: Path
) -> None:
    wire = start()
    session_id = _session(wire, root)
    fake.script(reply(tool_use("bash", {"command": "true"})), hang(60))

    def quit_instead(params: dict[str, Any]) -> dict[str, Any]:
        assert wire.process.stdin is not None
        wire.process.stdin.close()
        raise _Gone

    wire.answer_permission = quit_instead
    with pytest.raises(_Gone):
        _prompt(wire, session_id, "run true")
    began = time.monotonic()
    wire.process.wait(timeout=20)
    assert time.monotonic() - began < 10, wire.stderr
