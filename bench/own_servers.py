"""agentls's own language servers outside the LSP door (issue 42), side by side in one run:
the wait of a warm edit under `agentls run -p` with ruff server (and pyright, when
`pyright-langserver` is on PATH) against none, and what a server found adds to the first
request (the `definition` and `references` tools)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from agentls.eyes.definitions import BUILT_IN

from .api import FakeAnthropic, Turn, first_prompt_tokens, reply, text, tool_use

TASK = "Bump the module's values."
MODULE = "app.py"
_PYTHON = {".py": "python"}


@dataclass(frozen=True)
class EditWaits:
    """Seconds from each warm edit's tool_use to the request with its result, and the
    first request's input tokens."""

    servers: str
    waits: list[float]
    first_prompt_tokens: int

    @property
    def wait(self) -> float:
        return statistics.median(self.waits)


@dataclass(frozen=True)
class OwnServers:
    none: EditWaits
    ruff: EditWaits
    pyright: EditWaits | None
    """None when `pyright-langserver` is not on PATH."""
    navigating_tokens: int
    """The first request's input tokens with a server found that may answer `definition`
    and `references` (ruff's may not: it brings no tools)."""


def _module(values: int) -> str:
    lines = ["import os", "", ""]
    for n in range(values):
        lines += [f"VALUE_{n} = {n}", "", "", f"def value_{n}() -> int:", f"    return VALUE_{n}"]
        lines += ["", ""]
    return "\n".join(lines) + "\n"


def _turns(edits: int) -> list[Turn]:
    """The module written (the servers start: a cold edit, ruff's unused import in its
    result), then `edits` warm ones (the first a type error for pyright)."""
    turns = [reply(tool_use("write_file", {"path": MODULE, "content": _module(edits)}))]
    for n in range(edits):
        new = f'VALUE_{n}: int = "{n}"' if n == 0 else f"VALUE_{n} = -{n}"
        change = {"path": MODULE, "old_text": f"VALUE_{n} = {n}", "new_text": new}
        turns.append(reply(tool_use("edit_file", change)))
    return [*turns, reply(text("Done."))]


def _servers(built_in: str | None = None, **configured: Any) -> dict[str, Any]:
    """Every built-in server disabled but `built_in`'s row (found on PATH), and
    `configured`."""
    disabled = {
        d.name: {"command": d.command, "extensionToLanguage": _PYTHON, "disabled": True}
        for row in BUILT_IN
        if built_in not in [d.name for d in row]
        for d in row
    }
    return {**disabled, **configured}


async def _run(
    fake: FakeAnthropic, env: dict[str, str], home: Path, name: str, servers: dict[str, Any]
) -> list[Any]:
    # Paths of one length in each run: the prompt names its workspace.
    root = home / f"run-{len(list(home.glob('run-*')))}"
    root.mkdir(parents=True)
    (root / MODULE).write_text("")  # a file of the servers' kind: the tools are offered
    config = home / f"{root.name}-config" / "agentls"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"lspServers": servers}))
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "agentls", "run", "--yes", "-p", TASK, "--output-format", "json"),
        cwd=root,
        env={**env, "XDG_CONFIG_HOME": str(config.parent)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, errors = await process.communicate()
    if process.returncode != 0 or json.loads(out)["status"] != "done":
        raise RuntimeError(f"the task with {name} failed: {errors.decode(errors='replace')}")
    return fake.requests


def _waits(name: str, requests: list[Any]) -> EditWaits:
    results = [json.dumps(r.body["messages"][-1]["content"]) for r in requests[1:]]
    # The cold write's result may be late (pyright's first analysis); a warm one may not.
    late = [r for r in results[1:] if "in time" in r] + [r for r in results if "is out" in r]
    if late:
        raise RuntimeError(f"{name} did not serve every edit: {late[0][:300]}")
    # Requests: the task, the cold write's result, then each warm edit's.
    received = [r.received for r in requests[1:]]
    waits = [after - before for before, after in pairwise(received)]
    return EditWaits(name, waits, first_prompt_tokens(requests))


async def own_servers(home: Path, env: dict[str, str], edits: int) -> OwnServers:
    """The same task with no server, with ruff's, with pyright's if found; and the one-word
    task with a server configured that navigates (python itself: the task edits nothing,
    so it is never started)."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    with_ruff = {**env, "PATH": f"{Path(ruff).parent}{os.pathsep}{env.get('PATH', '')}"}
    never_started = {"command": sys.executable, "extensionToLanguage": _PYTHON}
    chosen: dict[str, tuple[dict[str, Any], dict[str, str], list[Turn]]] = {
        "none": (_servers(), env, _turns(edits)),
        "ruff": (_servers("ruff"), with_ruff, _turns(edits)),
        "navigating": (_servers(python=never_started), env, [reply(text("Hi."))]),
    }
    pyright = shutil.which("pyright-langserver", path=env.get("PATH"))
    if pyright:
        chosen["pyright"] = (_servers("pyright"), env, _turns(edits))
    found: dict[str, list[Any]] = {}
    with FakeAnthropic() as fake:
        for name, (servers, environ, turns) in chosen.items():
            fake.reset()
            fake.script(*turns)
            url = {**environ, "ANTHROPIC_BASE_URL": fake.url}
            found[name] = await _run(fake, url, home, name, servers)
    # Each server is seen to answer: ruff the cold write, pyright the first warm edit.
    for name, request, problem in (("ruff", 1, "imported but unused"), ("pyright", 2, "int")):
        told = json.dumps(found[name][request].body["messages"][-1]) if name in found else problem
        if problem not in told:
            raise RuntimeError(f"{name}'s diagnostics are not in the result: {told}")
    offered = {name: [t["name"] for t in found[name][0].body["tools"]] for name in found}
    if "definition" not in offered["navigating"] or "definition" in offered["ruff"]:
        raise RuntimeError(f"definition offered where it should not be, or not: {offered}")
    return OwnServers(
        _waits("none", found["none"]),
        _waits("ruff", found["ruff"]),
        _waits("pyright", found["pyright"]) if pyright else None,
        first_prompt_tokens(found["navigating"]),
    )
