"""A language server that misbehaves as told by its first argument, for agentls's own eyes:
`silent` never answers `initialize`; `crash` exits when a file is opened; `deaf` answers
`initialize` and then nothing, ignores SIGTERM and its input closing, and leaves a child in
its process group. `navigate` serves `textDocument/definition` (the line where the word at the
position is assigned or defined, in the text last synced) and `references` (every line naming
it), publishes no problem, and leaves at `exit`, or, as pyright does, when the process
`initialize` named is not there; `refuse` is the same but answers both requests with an
error. Each writes its environment (as JSON) to the file its second argument names, and its
pid and its child's on lines of the file its third argument names.

`pull` serves only pull diagnostics (LSP 3.17's `textDocument/diagnostic`, never a
push): an error on each line naming `bad`, its report's id the hash of those problems, so a
report it would send again is `unchanged`; it leaves at `exit`.

Two answer each version of a file with one diagnostic, `version N` on its first line, as
servers that behave do: `slow` its first only after 3.5 s (pyright reading the standard
library's stubs first), `watchful` at once, but it exits when the `processId` it was given
names no live process, checked every 0.2 s (vscode-languageserver's servers do it every
3 s)."""

from __future__ import annotations

import json
import os
import re
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


def word_at(text: str, position: dict[str, int]) -> str:
    """The word at an LSP position, its character counted in UTF-16 code units."""
    line = text.splitlines()[position["line"]]
    units = line.encode("utf-16-le")[: 2 * position["character"]]
    start = len(units.decode("utf-16-le"))
    match = re.match(r"\w+", line[start:])
    return match.group() if match else ""


def navigate(message: dict[str, Any], texts: dict[str, str]) -> list[dict[str, Any]]:
    params = message["params"]
    uri = params["textDocument"]["uri"]
    word = word_at(texts[uri], params["position"])
    lines = texts[uri].splitlines()
    if message["method"] == "textDocument/definition":
        wanted = re.compile(rf"^\s*(def |class )?{word}\b\s*[:=(]")
    else:
        wanted = re.compile(rf"\b{word}\b")
    found = [n for n, line in enumerate(lines) if word and wanted.search(line)]
    span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    return [{"uri": uri, "range": {**span, "start": {"line": n, "character": 0}}} for n in found]


def watch(pid: int | None) -> None:
    """As vscode-languageserver's servers (pyright) do: leave when the client's process,
    as `initialize` named it, is not there."""

    def check() -> None:
        while True:
            try:
                os.kill(pid, 0)  # type: ignore[arg-type]
            except ProcessLookupError:
                os._exit(4)
            except PermissionError:
                pass  # there, another user's
            time.sleep(0.2)

    if pid is not None:
        threading.Thread(target=check, daemon=True).start()


def serve(texts: dict[str, str], refuse: bool) -> None:
    capabilities = {"textDocumentSync": 1, "definitionProvider": True, "referencesProvider": True}
    while (message := read(sys.stdin)) is not None:
        method = message.get("method")
        params: Any = message.get("params")
        if method == "initialize":
            watch(params.get("processId"))
            send({"id": message["id"], "result": {"capabilities": capabilities}})
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            document = params["textDocument"]
            changes = params.get("contentChanges")
            texts[document["uri"]] = changes[-1]["text"] if changes else document["text"]
            found = {"uri": document["uri"], "version": document["version"], "diagnostics": []}
            send({"method": "textDocument/publishDiagnostics", "params": found})
        elif method in ("textDocument/definition", "textDocument/references") and refuse:
            send({"id": message["id"], "error": {"code": -32603, "message": "no index yet"}})
        elif method in ("textDocument/definition", "textDocument/references"):
            send({"id": message["id"], "result": navigate(message, texts)})
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
        elif method == "exit":
            return


def bad_lines(text: str) -> list[dict[str, Any]]:
    found = []
    for number, line in enumerate(text.splitlines()):
        if re.search(r"\bbad\b", line):
            start = {"line": number, "character": 0}
            found.append({"range": {"start": start, "end": start}, "message": "`bad` here"})
    return found


def pull() -> None:
    diagnostics = {"interFileDependencies": False, "workspaceDiagnostics": False}
    capabilities = {"textDocumentSync": 1, "diagnosticProvider": diagnostics}
    texts: dict[str, str] = {}
    while (message := read(sys.stdin)) is not None:
        method = message.get("method")
        params: Any = message.get("params")
        if method == "initialize":
            send({"id": message["id"], "result": {"capabilities": capabilities}})
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            document = params["textDocument"]
            changes = params.get("contentChanges")
            texts[document["uri"]] = changes[-1]["text"] if changes else document["text"]
        elif method == "textDocument/diagnostic":
            items = bad_lines(texts[params["textDocument"]["uri"]])
            result_id = str(hash(json.dumps(items)))
            if params.get("previousResultId") == result_id:
                report: dict[str, Any] = {"kind": "unchanged", "resultId": result_id}
            else:
                report = {"kind": "full", "resultId": result_id, "items": items}
            send({"id": message["id"], "result": report})
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
        elif method == "exit":
            return


def main() -> None:
    mode, env_file, pids_file = sys.argv[1:4]
    with open(env_file, "w") as out:
        json.dump(dict(os.environ), out)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(pids_file, "a") as out:
        out.write(f"{os.getpid()}\n{child.pid}\n")
    if mode in ("navigate", "refuse", "pull"):
        if mode == "pull":
            pull()
        else:
            serve({}, mode == "refuse")
        child.kill()
        return
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


if __name__ == "__main__":
    main()
