"""Records what the real llama-server answers, for the fakes to replay (`fake_api.replay`):
`python tests/real_server/record.py` (after setup.sh) writes `tests/fake_api/recordings/
llamacpp/*.json`, each the request sent, the answer's status, content type and body as they
came, and the server's build. The tests of the adapters replay them, so the wire shapes they
meet are the real server's, not ours.

What is asked: a tool call forced by an assistant prefill (ChatML's `<tool_call>` opened),
let run (`call`: SmolLM2 writes the call, then output the server's parser refuses, and the
server ends with its error event) and cut at `max_tokens` (`cut_call`), in both formats; a
prefill the server cannot parse (`unparseable_call`); and `/props` with a template that has
tools and one that has not, their template texts left out (llama.cpp's and the model's own
files, not ours to copy).
"""

from __future__ import annotations

import http.client
import json
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).parents[1]))

from real_server.llama import Running, llama_server

OUT = Path(__file__).parents[1] / "fake_api" / "recordings" / "llamacpp"
MODEL = "smollm2"
READ_FILE = {
    "name": "read_file",
    "description": "Read a file of the workspace.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
TASK = "Read the file a.py."
OPENED = '<tool_call>\n{"name": "'
"""An assistant prefill that opens a ChatML tool call: the server finishes and parses it."""
UNPARSEABLE = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}}}\n</tool_call>'
"""A prefill whose call is not JSON: the server's parser fails once the answer began."""


def messages_body(prefill: str, max_tokens: int) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": max_tokens,
        "stream": True,
        "system": [{"type": "text", "text": "You are a coding agent. Use the tools."}],
        "tools": [READ_FILE],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": TASK}]},
            {"role": "assistant", "content": [{"type": "text", "text": prefill}]},
        ],
    }


def chat_body(prefill: str, max_tokens: int) -> dict[str, Any]:
    tool = {
        "type": "function",
        "function": {
            "name": READ_FILE["name"],
            "description": READ_FILE["description"],
            "parameters": READ_FILE["input_schema"],
        },
    }
    return {
        "model": MODEL,
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [tool],
        "messages": [
            {"role": "system", "content": "You are a coding agent. Use the tools."},
            {"role": "user", "content": TASK},
            {"role": "assistant", "content": prefill},
        ],
    }


def ask(server: Running, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
    """The answer as it came: status, content type, body (text, exactly)."""
    parts = urlsplit(server.url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=600)
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"} if data else {}
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    received = response.read()
    connection.close()
    return {
        "status": response.status,
        "content_type": response.getheader("content-type", ""),
        "body": received.decode(),
    }


TEMPLATES = ("chat_template", "chat_template_tool_use")


def save(name: str, server: Running, method: str, path: str, body: Any) -> None:
    answer = ask(server, method, path, body)
    if path == "/props":
        props = json.loads(answer["body"])
        props.update({key: "(left out)" for key in TEMPLATES if key in props})
        answer["body"] = json.dumps(props)
    build = server.get("/props").get("build_info")
    recording = {
        "server": f"llama.cpp llama-server {build}",
        "request": {"method": method, "path": path, "body": body},
        "answer": answer,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(recording, indent=1, ensure_ascii=False) + "\n")
    print(f"{name}: {answer['status']}, {len(answer['body'])} characters")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "llama-server.log"
        with llama_server(log) as server:
            save("props_with_tools", server, "GET", "/props", None)
            for name, prefill, limit in (
                ("call", OPENED, 64),
                ("cut_call", OPENED, 6),  # the call begun: `{` of its input
                ("unparseable_call", UNPARSEABLE, 16),
            ):
                save(
                    f"messages_{name}",
                    server,
                    "POST",
                    "/v1/messages",
                    messages_body(prefill, limit),
                )
                save(
                    f"chat_{name}",
                    server,
                    "POST",
                    "/v1/chat/completions",
                    chat_body(prefill, limit),
                )
        with llama_server(log, tools_template=False) as server:
            save("props_without_tools", server, "GET", "/props", None)


if __name__ == "__main__":
    main()
