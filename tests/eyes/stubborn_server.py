"""A language server that misbehaves as told by its first argument, for agentls's own eyes:
`silent` never answers `initialize`; `crash` exits when a file is opened; `deaf` answers
`initialize` and then nothing, ignores SIGTERM and its input closing, and leaves a child in
its process group. Each writes its environment (as JSON) to the file its second argument
names, and its pid and its child's on lines of the file its third argument names."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


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
        elif method == "textDocument/didOpen" and mode == "crash":
            sys.exit(3)
    time.sleep(600)  # deaf: its input closed, it stays


if __name__ == "__main__":
    main()
