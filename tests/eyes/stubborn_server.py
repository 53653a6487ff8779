"""A language server that misbehaves as told by its first argument, for agentls's own eyes:
`silent` never answers `initialize`; `crash` exits when a file is opened; `deaf` answers
`initialize` and then nothing, ignores SIGTERM and its input closing, and leaves a child in
its process group. Each writes its environment (as JSON) to the file its second argument
names, and its pid and its child's on lines of the file its third argument names.

Two answer each version of a file with one diagnostic, `version N` on its first line, as
servers that behave do: `slow` its first only after 3.5 s (pyright reading the standard
library's stubs first), `watchful` at once, but it exits when the `processId` it was given
names no live process, checked every 0.2 s (vscode-languageserver's servers do it every
3 s)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any


def read(stream: object) -> dict[str, object] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))  # type: ignore[no-any-return]


def send(message: dict[str, object]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main() -> None:
    mode, env_file, pids_file = sys.argv[1:4]
    with open(env_file, "w") as out:
        json.dump(dict(os.environ), out)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(pids_file, "a") as out:
        out.write(f"{os.getpid()}\n{child.pid}\n")
    while (message := read(sys.stdin)) is not None:
        method = message.get("method")
        if method == "initialize" and mode != "silent":
            send({"id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
            if mode == "watchful":
                watch(message["params"]["processId"])
        elif method == "textDocument/didOpen" and mode == "crash":
            sys.exit(3)
        elif method in ("textDocument/didOpen", "textDocument/didChange") and mode in (
            "slow",
            "watchful",
        ):
            if mode == "slow" and method == "textDocument/didOpen":
                time.sleep(3.5)
            publish(message["params"]["textDocument"])
    time.sleep(600)  # deaf: its input closed, it stays


def publish(document: dict[str, Any]) -> None:
    version = document["version"]
    start = {"line": 0, "character": 0}
    found = {"range": {"start": start, "end": start}, "message": f"version {version}"}
    params = {"uri": document["uri"], "version": version, "diagnostics": [found]}
    send({"method": "textDocument/publishDiagnostics", "params": params})


def watch(parent: int | None) -> None:
    def check() -> None:
        while parent is not None:
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass  # alive, another user's
            time.sleep(0.2)

    threading.Thread(target=check, daemon=True).start()


if __name__ == "__main__":
    main()
