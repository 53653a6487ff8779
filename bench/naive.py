"""The naive reference loop, written the way the agent-loop tutorials write it.

Modelled on shareAI-lab/learn-claude-code's tool-use step: the real `anthropic` SDK's plain
`messages.create`, the whole history sent at every step, no prompt caching, the SDK's
response blocks kept in the history as they came, tool output cut at 50 KB, the workspace
being the current directory. Run as a script in the workspace (the benchmarks do):

    MODEL_ID=... ANTHROPIC_BASE_URL=... python bench/naive.py "the task"
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from anthropic import Anthropic
from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam

OUTPUT_CAP = 50_000
WORKDIR = Path.cwd()
SYSTEM = f"You are a coding agent at {WORKDIR}. Use tools to solve tasks. Act, don't explain."
client = Anthropic()
MODEL = os.environ["MODEL_ID"]


def inside(path: str) -> Path:
    resolved = (WORKDIR / path).resolve()
    if not resolved.is_relative_to(WORKDIR):
        raise ValueError(f"path escapes the workspace: {path}")
    return resolved


def bash(command: str) -> str:
    try:
        done = subprocess.run(
            command, shell=True, cwd=WORKDIR, capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        return "Error: timed out after 120 s"
    output = (done.stdout + done.stderr).strip()
    return output[:OUTPUT_CAP] or "(no output)"


def read_file(path: str, limit: int | None = None) -> str:
    try:
        lines = inside(path).read_text().splitlines()
    except (OSError, ValueError) as error:
        return f"Error: {error}"
    if limit and limit < len(lines):
        lines = [*lines[:limit], f"... ({len(lines) - limit} more lines)"]
    return "\n".join(lines)[:OUTPUT_CAP]


def write_file(path: str, content: str) -> str:
    try:
        target = inside(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    except (OSError, ValueError) as error:
        return f"Error: {error}"
    return f"Wrote {len(content)} bytes to {path}"


def edit_file(path: str, old_text: str, new_text: str) -> str:
    try:
        target = inside(path)
        content = target.read_text()
        if old_text not in content:
            return f"Error: text not found in {path}"
        target.write_text(content.replace(old_text, new_text, 1))
    except (OSError, ValueError) as error:
        return f"Error: {error}"
    return f"Edited {path}"


HANDLERS: dict[str, Callable[..., str]] = {
    "bash": bash,
    "read_file": read_file,
    "write_file": write_file,
    "edit_file": edit_file,
}


def _tool(
    name: str, description: str, required: dict[str, str], optional: dict[str, str] | None = None
) -> ToolParam:
    """A tool schema; the dicts map each argument to its JSON type."""
    properties = {arg: {"type": kind} for arg, kind in {**required, **(optional or {})}.items()}
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": list(required)},
    }


TOOLS = [
    _tool("bash", "Run a shell command.", {"command": "string"}),
    _tool("read_file", "Read file contents.", {"path": "string"}, {"limit": "integer"}),
    _tool("write_file", "Write content to file.", {"path": "string", "content": "string"}),
    _tool(
        "edit_file",
        "Replace exact text in file.",
        {"path": "string", "old_text": "string", "new_text": "string"},
    ),
]


def agent_loop(messages: list[MessageParam]) -> None:
    while True:
        response = client.messages.create(
            model=MODEL, system=SYSTEM, messages=messages, tools=TOOLS, max_tokens=8000
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        results: list[ToolResultBlockParam] = []
        for block in response.content:
            if block.type == "tool_use":
                handler = HANDLERS.get(block.name)
                output = handler(**block.input) if handler else f"Unknown tool: {block.name}"
                print(f"> {block.name}: {output[:200]}")
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    agent_loop([{"role": "user", "content": " ".join(sys.argv[1:])}])
