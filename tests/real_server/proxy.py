"""A logging proxy between agentls and the real server: every request and the answer to it
are kept (`exchanges`), the answer streamed through as it comes, so a test checks the wire
itself: what agentls sent, what the server said of it. It may add an assistant prefill to
the first request of a task (`prefill`), which makes a small model's first answer a tool
call: the server finishes and parses the call it was handed the start of."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

Prefill = Callable[[str, dict[str, Any]], dict[str, Any]]
"""(path, request body) -> the body to send instead."""


@dataclass
class Exchange:
    method: str
    path: str
    request: Any
    status: int = 0
    answer: bytes = b""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self._forward(json.loads(self.rfile.read(length) or b"null"))

    def _forward(self, body: Any) -> None:
        proxy = self.server.proxy
        first = not any(e.method == "POST" for e in proxy.exchanges)  # after GET /props
        if isinstance(body, dict) and proxy.prefill is not None and first:
            body = proxy.prefill(self.path, body)
        exchange = Exchange(self.command, self.path, body)
        proxy.exchanges.append(exchange)
        upstream = http.client.HTTPConnection(proxy.host, proxy.port, timeout=proxy.timeout)
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"} if data is not None else {}
        upstream.request(self.command, self.path, body=data, headers=headers)
        response = upstream.getresponse()
        exchange.status = response.status
        self.send_response(response.status)
        self.send_header("content-type", response.getheader("content-type", "text/plain"))
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        received = bytearray()
        while piece := response.read1(65536):
            received += piece
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        exchange.answer = bytes(received)
        upstream.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _Handler)


class Proxy:
    """`with Proxy(upstream) as proxy:` serves on `proxy.url` until the block ends."""

    def __init__(self, upstream: str, prefill: Prefill | None = None, timeout: float = 900):
        parts = urlsplit(upstream)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.prefill = prefill
        self.timeout = timeout
        self.exchanges: list[Exchange] = []
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Proxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
