"""A fake of the servers inline completions talk to, each route in its documented shape:
OpenAI's `/completions` (prompt, suffix, max_tokens; `choices[0].text`), llama.cpp's
`/infill` (input_prefix, input_suffix, n_predict; `content`), Ollama's `/api/generate`
(prompt, suffix, stream false; `response`), and the chat routes, Anthropic's `/v1/messages`
(`content[].text`) and OpenAI's `/chat/completions` (`choices[0].message.content`).

It records each request (`GET /_fake/requests` lists them), answers after `delay` seconds,
and notices a client that closes the connection while it waits (`disconnected`), as a real
server stops generating then.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[str, dict[str, Any]], str]
"""(path, request body) -> the model's text."""


@dataclass
class Seen:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received: float = field(default_factory=time.monotonic)
    """When its body had arrived (time.monotonic)."""
    answered: float | None = None
    """When the answer had been written: the model's own time is `answered - received`."""


def _fim_answer(path: str, text: str) -> dict[str, Any] | None:
    if path.endswith("/infill"):
        return {"content": text, "stop": True}
    if path.endswith("/api/generate"):
        return {"model": "m", "response": text, "done": True, "done_reason": "stop"}
    if path.endswith("/chat/completions"):
        message = {"role": "assistant", "content": text}
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if path.endswith("/completions"):
        return {"choices": [{"index": 0, "text": text, "finish_reason": "stop"}]}
    if path.endswith("/v1/messages"):
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    return None


class FakeCompletions:
    def __init__(self, answer: Answer | str = "completion()", port: int = 0) -> None:
        self.answer: Answer = answer if callable(answer) else (lambda _path, _body: answer)
        self.delay = 0.0
        self.status: dict[str, int] = {}
        """An HTTP status to answer on a path (its suffix), e.g. {"/completions": 404}."""
        self.requests: list[Seen] = []
        self.completed: list[Seen] = []
        self.disconnected: list[Seen] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeCompletions:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def paths(self) -> list[str]:
        with self._lock:
            return [seen.path for seen in self.requests]

    def _record(self, into: list[Seen], seen: Seen) -> None:
        with self._lock:
            into.append(seen)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body are written apart: without this, Nagle's algorithm holds
                # the body for the client's delayed ACK (40 ms), which is no model's time.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self) -> None:
                """`/_fake/requests`: what was asked, for a driver that is not Python."""
                if self.path != "/_fake/requests":
                    self.send_error(404)
                    return
                with fake._lock:
                    seen = [{"path": s.path, "body": s.body} for s in fake.requests]
                payload = json.dumps(seen).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                seen = Seen(self.path, body, headers)
                fake._record(fake.requests, seen)
                if not self._wait(fake.delay):
                    fake._record(fake.disconnected, seen)
                    self.close_connection = True
                    return
                status = next(
                    (code for path, code in fake.status.items() if self.path.endswith(path)), 200
                )
                answer = _fim_answer(self.path, fake.answer(self.path, body))
                if answer is None:
                    status = 404
                payload = json.dumps(answer if status == 200 else {"error": "no"}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    fake._record(fake.disconnected, seen)
                    return
                seen.answered = time.monotonic()
                fake._record(fake.completed, seen)

            def _wait(self, seconds: float) -> bool:
                """Wait as a model generates; False once the client has closed."""
                deadline = time.monotonic() + seconds
                connection: socket.socket = self.connection
                while (left := deadline - time.monotonic()) > 0:
                    readable, _, _ = select.select([connection], [], [], min(left, 0.01))
                    if readable and connection.recv(1, socket.MSG_PEEK) == b"":
                        return False
                return True

        return Handler


def inline_params(uri: str, line: int, character: int) -> Any:
    """`textDocument/inlineCompletion` params at a cursor, as an editor sends them typing."""
    from lsprotocol import types

    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line, character),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic
        ),
    )
