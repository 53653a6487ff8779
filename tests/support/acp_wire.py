"""A client of `agentls acp` on the raw wire: JSON-RPC lines over the process's stdio, every
message the agent sends checked against the official ACP v1 schema (tests/acp/schema/).

The schema is checked twice over: the whole message against the schema's `Agent` message
(a response, a request or a notification), and its part against the one type its method
names (`session/new`'s answer against `NewSessionResponse`, an update against
`SessionNotification`, ...), so a message cannot pass as some other method's."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = Path(__file__).parents[1] / "acp" / "schema" / "acp-v1.schema.json"

Message = dict[str, Any]


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text())
    return loaded


def _defs_by(side: str, suffix: str) -> dict[str, str]:
    """The schema's types of one side's methods: method -> type name."""
    return {
        definition["x-method"]: name
        for name, definition in _schema()["$defs"].items()
        if definition.get("x-side") == side and name.endswith(suffix)
    }


@cache
def _validator(name: str | None) -> Any:
    schema = _schema()
    target = schema["anyOf"][0] if name is None else {"$ref": f"#/$defs/{name}"}
    assert name is not None or target["title"] == "Agent"
    whole = {"$schema": schema["$schema"], "$defs": schema["$defs"], **target}
    validator = jsonschema.validators.validator_for(whole)
    validator.check_schema(whole)
    return validator(whole)


def check(message: Message, asked: str | None) -> None:
    """Raise when `message` (from the agent; `asked`: the method it answers) breaks the schema."""
    _validator(None).validate(message)
    if "result" in message and asked is not None:
        _validator(_defs_by("agent", "Response")[asked]).validate(message["result"])
    elif "method" in message and message["method"] == "session/update":
        _validator("SessionNotification").validate(message["params"])
    elif "method" in message and "id" in message:
        _validator(_defs_by("client", "Request")[message["method"]]).validate(message["params"])


class AcpError(Exception):
    def __init__(self, error: Mapping[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = int(error["code"])
        self.message = str(error.get("message", ""))


def allow_once(params: Message) -> Message:
    """Answer a permission request with its first allowing option."""
    allowed = [o for o in params["options"] if o["kind"].startswith("allow")]
    return {"outcome": {"outcome": "selected", "optionId": allowed[0]["optionId"]}}


class AcpWire:
    """`agentls acp` started with `env`; `request` sends and waits for the answer, keeping
    every notification (`updates`) and answering the agent's permission requests."""

    def __init__(self, env: Mapping[str, str], cwd: Path, command: list[str] | None = None):
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "agentls", "acp"],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.messages: list[Message] = []
        """Every message the agent sent, in order (each checked against the schema)."""
        self.answer_permission: Callable[[Message], Message] = allow_once
        self._asked: dict[int, str] = {}
        self._answered: dict[int, Message] = {}
        self._next = 0
        self._inbox: queue.Queue[Message | None] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._inbox.put(json.loads(line))
        self._inbox.put(None)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def _send(self, message: Message) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def send(self, method: str, params: Message) -> int:
        """Send a request without waiting; its id (for `wait`)."""
        self._next += 1
        self._asked[self._next] = method
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return self._next

    def notify(self, method: str, params: Message) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, request_id: int, timeout: float = 60) -> Message:
        """The result of request `request_id`; raises AcpError for an error answer."""
        deadline = time.monotonic() + timeout
        while request_id not in self._answered:
            message = self._inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            if message is None:
                raise EOFError(f"the agent exited; stderr:\n{self.stderr}")
            answers = message.get("id") if "method" not in message else None
            check(message, self._asked.get(answers) if isinstance(answers, int) else None)
            self.messages.append(message)
            if "method" in message and "id" in message:
                self._answer(message)
            elif isinstance(answers, int):
                self._answered[answers] = message
        answer = self._answered.pop(request_id)
        if "error" in answer:
            raise AcpError(answer["error"])
        result: Message = answer["result"]
        return result

    def _answer(self, request: Message) -> None:
        if request["method"] == "session/request_permission":
            result = self.answer_permission(request["params"])
            self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})
        else:
            error = {"code": -32601, "message": f"{request['method']} is not offered"}
            self._send({"jsonrpc": "2.0", "id": request["id"], "error": error})

    def request(self, method: str, params: Message, timeout: float = 60) -> Message:
        return self.wait(self.send(method, params), timeout)

    def initialize(self, capabilities: Message | None = None) -> Message:
        return self.request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {}}
        )

    def updates(self, kind: str, session_id: str | None = None) -> list[Message]:
        return [
            m["params"]["update"]
            for m in self.messages
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == kind
            and session_id in (None, m["params"]["sessionId"])
        ]

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(timeout=10)
