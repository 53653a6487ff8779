"""The HTTP server: `FakeAnthropic`, its request handler and its recordings."""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import socketserver
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .billing import Billing, InputUsage, compute_input_usage, output_tokens, over_window
from .images import chat_images, messages_images
from .limits import CACHE_LOOKBACK_BLOCKS, DEFAULT_MIN_CACHEABLE_TOKENS, EXHAUSTED_MESSAGE
from .replay import Replay
from .script import (
    Fault,
    Hang,
    Reply,
    ScriptItem,
    ServerToolBlock,
    TextBlock,
    Turn,
    as_turn,
    bad_request,
    turn_from_json,
)
from .validation import validate_request
from .wire import sse_events, usage_json


@dataclass(frozen=True)
class Recorded:
    body: dict[str, Any]
    headers: dict[str, str]
    received: float = field(default_factory=time.monotonic)
    """When the request arrived (time.monotonic), for timing the client between requests."""

    @property
    def images(self) -> list[dict[str, Any]]:
        """The request's images (`fake_api.images`), whichever format it is in."""
        return messages_images(self.body) + chat_images(self.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakeAnthropic) -> None:
        self.fake = fake
        super().__init__(address, fake.handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup, which can stall offline.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Quiet by design; keep surprises where a test can assert on them.
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, OSError):
            self.fake._note_error(exc)


class _Handler(BaseHTTPRequestHandler):
    """The HTTP side every fake shares: routes, faults, hangs, stream faults. The fake of
    another API subclasses it for its endpoint and its error body."""

    endpoint = "/v1/messages"
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like the real API
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; with Nagle on, delayed ACKs
        # would add ~40 ms to every response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._track(self.connection, True)

    def finish(self) -> None:
        self.server.fake._track(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()

    # ---- plumbing

    def _read_json(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"null")

    def _send(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(
        self, status: int, type: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        request_id = self.server.fake._next_id("req_fake")
        body = self._error_body(type, message, request_id)
        self._send(status, body, {"request-id": request_id, **(headers or {})})

    def _error_body(self, type: str, message: str, request_id: str) -> Any:
        return {
            "type": "error",
            "error": {"type": type, "message": message},
            "request_id": request_id,
        }

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _route(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    # ---- verbs

    def do_GET(self) -> None:
        fake = self.server.fake
        route = self._route()
        if route == "/_fake/requests":
            self._send(200, [r.body for r in fake.requests])
        elif route == "/_fake/billed":
            self._send(200, fake.billed.__dict__)
        elif ("GET", route) in fake.server_info:
            self._send_info(("GET", route))
        else:
            self._send_error(404, "not_found_error", f"fake API: no route GET {route}")

    def _send_info(self, route: tuple[str, str]) -> None:
        answer = self.server.fake.server_info[route]
        if isinstance(answer, Replay):
            self._replay(answer)
        else:
            self._send(200, answer)

    def do_POST(self) -> None:
        fake = self.server.fake
        route = self._route()
        try:
            payload = self._read_json()
        except ValueError as exc:
            self._send_error(400, "invalid_request_error", f"invalid JSON body: {exc}")
            return
        if route == self.endpoint:
            self._messages(payload)
        elif route == "/_fake/script":
            try:
                items = payload if isinstance(payload, list) else [payload]
                turns = [turn_from_json(t) for t in items]
            except (ValueError, TypeError) as exc:
                self._send_error(400, "invalid_request_error", f"fake API: {exc}")
                return
            fake.script(*turns)
            self._send(200, {"queued": len(turns), "pending": fake.pending})
        elif route == "/_fake/reset":
            fake.reset()
            self._send(200, {"ok": True})
        elif ("POST", route) in fake.server_info:
            fake._record(payload, {k.lower(): v for k, v in self.headers.items()})
            self._send_info(("POST", route))
        else:
            self._send_error(404, "not_found_error", f"fake API: no route POST {route}")

    # ---- the Messages endpoint

    def _messages(self, body: Any) -> None:
        fake = self.server.fake
        if not isinstance(body, dict):
            self._send_error(400, "invalid_request_error", "request body must be a JSON object")
            return
        fake._record(body, {k.lower(): v for k, v in self.headers.items()})
        problem = fake._problem(body)
        if problem is not None:
            self._send_error(400, "invalid_request_error", problem)
            return
        turn = fake._next_turn(body)
        if turn is None:
            # x-should-retry makes "do not retry" explicit for any client, not just the SDK.
            self._send_error(
                400, "invalid_request_error", EXHAUSTED_MESSAGE, {"x-should-retry": "false"}
            )
            return
        self._play(turn, body)

    def _play(self, turn: Turn, body: dict[str, Any]) -> None:
        fake = self.server.fake
        resolved = fake._resolve(turn, body)
        if isinstance(resolved, Hang):
            if fake._stopping.wait(resolved.seconds) or resolved.then is None:
                self._drop()
            else:
                self._play(resolved.then, body)
        elif isinstance(resolved, Fault):
            self._send_error(resolved.status, resolved.type, resolved.message, resolved.headers)
        elif isinstance(resolved, Replay):
            self._replay(resolved)
        else:
            self._reply(resolved, body)

    def _replay(self, replay: Replay) -> None:
        """A real server's answer as it came, then its silence, if it has one."""
        self.send_response(replay.status)
        self.send_header("content-type", replay.content_type)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in replay.events():
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        if replay.silence is not None:
            self.server.fake._stopping.wait(replay.silence)
            self._drop()
            return
        self.wfile.write(b"0\r\n\r\n")

    def _reply(self, turn: Reply, body: dict[str, Any]) -> None:
        fake = self.server.fake
        message, usage = fake._materialise(turn, body)
        request_id = message.pop("_request_id")
        if turn.delay and fake._stopping.wait(turn.delay):
            self._drop()
            return
        if not body.get("stream"):
            self._send(200, message, {"request-id": request_id})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", request_id)
        self.end_headers()
        for n, (name, chunk) in enumerate(fake._stream(message, turn, usage, body)):
            if turn.drop_after is not None and n >= turn.drop_after:
                self._drop()
                return
            if turn.end_after is not None and n >= turn.end_after:
                break
            if name == "message_stop" and turn.omit_message_stop:
                break
            if n and turn.event_delay and fake._stopping.wait(turn.event_delay):
                self._drop()
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")


class FakeAnthropic:
    """A scripted Messages API on 127.0.0.1; see the package docstring."""

    handler: type[_Handler] = _Handler
    billing: type[Billing] = Billing

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        min_cacheable_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
        cache_lookback: int = CACHE_LOOKBACK_BLOCKS,
        validate: bool = True,
        context_window: int | None = None,
    ) -> None:
        self.host = host
        self.context_window = context_window
        self._port = port
        self.min_cacheable_tokens = min_cacheable_tokens
        self.cache_lookback = cache_lookback
        self.validate = validate
        self._cond = threading.Condition(threading.RLock())
        self._queue: deque[Turn] = deque()
        self._by_prompt: dict[str, deque[Turn]] = {}
        self._requests: list[Recorded] = []
        self._cache: set[str] = set()
        self._billed = self.billing()
        self._counters: dict[str, int] = {}
        self._errors: list[BaseException] = []
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._wake: socket.socket | None = None
        self.server_info: dict[tuple[str, str], Any] = {}
        """Answers of the server's own endpoints by (method, path), JSON or a Replay: what
        a local server says of itself (llama.cpp's `GET /props`, Ollama's `POST /api/show`)."""

    # ---- lifecycle

    def start(self) -> FakeAnthropic:
        with self._cond:
            if self._server is not None or self._stopping.is_set():
                raise RuntimeError("a FakeAnthropic can be started once")
            self._server = _Server((self.host, self._port), self)
        self._port = self._server.server_address[1]
        wake_r, self._wake = socket.socketpair()
        self._thread = threading.Thread(
            target=self._serve,
            args=(self._server, wake_r),
            name=f"fake-anthropic-{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def _serve(self, server: _Server, wake: socket.socket) -> None:
        # Our own accept loop instead of serve_forever: serve_forever notices a
        # shutdown only between polls, which would put ~50 ms into every stop().
        server.timeout = 0
        with wake, selectors.DefaultSelector() as selector:
            selector.register(server, selectors.EVENT_READ)
            selector.register(wake, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is server and not self._stopping.is_set():
                        server.handle_request()

    def stop(self) -> None:
        with self._cond:
            server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wakes hangs, delays and per-event waits at once
        if self._wake is not None:
            self._wake.send(b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
        server.server_close()
        if self._wake is not None:
            self._wake.close()
        with self._cond:
            live = list(self._connections)
        # Idle keep-alive connections would otherwise pin handler threads forever.
        for conn in live:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self._port}"

    # ---- scripting and inspection

    def script(self, *turns: ScriptItem) -> None:
        converted = [as_turn(t) for t in turns]
        with self._cond:
            self._queue.extend(converted)

    def script_for(self, prompt: str, *turns: ScriptItem) -> None:
        """Queue turns for the requests whose first user message contains `prompt`, apart
        from the shared queue: tasks that run side by side (a batch) each follow their own
        script, whichever asks first. A task run again (a retry) goes on where it stopped."""
        converted = [as_turn(t) for t in turns]
        with self._cond:
            self._by_prompt.setdefault(prompt, deque()).extend(converted)

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    @property
    def requests(self) -> list[Recorded]:
        with self._cond:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[Recorded]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"saw {len(self._requests)} requests, wanted {count}")
            return list(self._requests)

    @property
    def billed(self) -> Billing:
        with self._cond:
            return self.billing(**self._billed.__dict__)

    def reset_billed(self) -> Billing:
        """Zero the running totals and return what they were."""
        with self._cond:
            old, self._billed = self._billed, self.billing()
            return old

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised inside the fake (including by script callables)."""
        with self._cond:
            return list(self._errors)

    def reset(self) -> None:
        with self._cond:
            self._queue.clear()
            self._by_prompt.clear()
            self._requests.clear()
            self._cache.clear()
            self._billed = self.billing()
            self._counters.clear()
            self._errors.clear()

    # ---- used by the handler threads

    def _track(self, conn: socket.socket, live: bool) -> None:
        with self._cond:
            if live and self._stopping.is_set():
                # Accepted just as stop() took its snapshot: close it here instead.
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
            elif live:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _note_error(self, exc: BaseException) -> None:
        with self._cond:
            self._errors.append(exc)

    def _next_id(self, prefix: str) -> str:
        with self._cond:
            n = self._counters[prefix] = self._counters.get(prefix, 0) + 1
        return f"{prefix}_{n}"

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._cond:
            self._requests.append(Recorded(body, headers))
            self._cond.notify_all()

    def _next_turn(self, body: dict[str, Any]) -> Turn | None:
        with self._cond:
            if self._by_prompt:
                task = _first_user_text(body)
                for prompt, turns in self._by_prompt.items():
                    if prompt in task:
                        return turns.popleft() if turns else None
            return self._queue.popleft() if self._queue else None

    def _resolve(self, turn: Turn, body: dict[str, Any]) -> Reply | Fault | Hang | Replay:
        # Called outside the lock: a scripted model may inspect the fake itself.
        for _ in range(100):
            if isinstance(turn, (Reply, Fault, Hang, Replay)):
                return turn
            try:
                turn = as_turn(turn(body))
            except Exception as exc:
                self._note_error(exc)
                return bad_request(f"fake API: script callable raised {exc!r}")
        return bad_request("fake API: script callables nested too deeply")

    def _problem(self, body: dict[str, Any]) -> str | None:
        """The 400 the real API would answer this request with, or None."""
        problem = validate_request(body) if self.validate else None
        if problem is None and self.context_window is not None:
            problem = over_window(body, self.context_window)
        return problem

    def _stream(
        self, message: dict[str, Any], turn: Reply, usage: InputUsage, body: dict[str, Any]
    ) -> list[tuple[str, bytes]]:
        """The answer's SSE events, each named (the last one "message_stop") and framed."""
        return [
            (name, f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            for name, data in sse_events(message, turn.content, usage)
        ]

    def _materialise(self, turn: Reply, body: dict[str, Any]) -> tuple[dict[str, Any], InputUsage]:
        content: list[dict[str, Any]] = []
        for block in turn.content:
            if isinstance(block, TextBlock):
                cites = {"citations": [dict(c) for c in block.citations]} if block.citations else {}
                content.append({"type": "text", "text": block.text, **cites})
            elif isinstance(block, ServerToolBlock):
                content.append(dict(block.block))
            else:
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.id or self._next_id("toolu_fake"),
                        "name": block.name,
                        "input": dict(block.input),
                    }
                )
        out = output_tokens(turn.content)
        with self._cond:
            usage, new_keys = compute_input_usage(
                body,
                self._cache,
                min_cacheable_tokens=self.min_cacheable_tokens,
                lookback=self.cache_lookback,
            )
            self._cache |= new_keys
            self._billed.input += usage.input_tokens
            self._billed.cache_read += usage.cache_read_input_tokens
            self._billed.cache_write += usage.cache_creation_input_tokens
            self._billed.output += out
        message = {
            "id": self._next_id("msg_fake"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": turn.effective_stop_reason,
            "stop_sequence": None,
            "usage": usage_json(usage, out),
        }
        message["_request_id"] = self._next_id("req_fake")
        return message, usage


def _first_user_text(body: dict[str, Any]) -> str:
    """The text of the request's first user message: the task, in an agent's conversation."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(
                    block.get("text", "") for block in content if isinstance(block, dict)
                )
            return ""
    return ""
