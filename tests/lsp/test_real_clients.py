"""Real editors that agentls was not built against, as Debian packages them: Emacs 28 with
eglot 1.9 (`emacs-nox`, `elpa-eglot`) and Neovim 0.7 (`neovim`, /usr/bin/nvim). Each runs a
task whose model edits an open file twice and creates a new one, and checks what the model
is told of each. A marked tier: `.ci/run`
installs the packages and runs it; without them these tests are skipped."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_api import FakeAnthropic, reply, text, tool_use

SCRIPTS = Path(__file__).parent / "real_clients"
REQUIRED = os.environ.get("AGENTLS_REAL_CLIENTS") == "required"
"""Set by `.ci/run`: a missing editor fails there instead of skipping."""


def needs(program: str, package: str) -> pytest.MarkDecorator:
    missing = not REQUIRED and shutil.which(program) is None
    return pytest.mark.skipif(missing, reason=f"needs {package}")


SOURCE = "def greet():\n    return 'hi'\n\nvalue = 1\n"
EDITED = "import os\n\n\ndef greet():\n    return 'hi'\n\nvalue = 2\n"
NOTES = "first\nsecond\n"


def edit(old: str, new: str) -> Any:
    return reply(tool_use("edit_file", {"path": "app.py", "old_text": old, "new_text": new}))


def script_the_model(fake: FakeAnthropic) -> None:
    fake.script(
        edit("value = 1", "value = 2"),
        # Lines added above: computed on a stale copy, the next edit would land too high.
        edit("def greet", "import os\n\n\ndef greet"),
        reply(tool_use("write_file", {"path": "notes.md", "content": NOTES})),
        text("done"),
    )


async def run(command: list[str], env: dict[str, str], timeout: float = 120) -> None:
    process = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode == 0, output.decode(errors="replace")[-3000:]


def environment(root: Path, fake: FakeAnthropic, out: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key-123",
        "XDG_CONFIG_HOME": str(root.parent / "config"),
        "HOME": str(root.parent),
        "AGENTLS_PYTHON": sys.executable,
        "AGENTLS_TEST_ROOT": str(root),
        "AGENTLS_TEST_OUT": str(out),
    }


def told(fake: FakeAnthropic) -> list[str]:
    """The tool results the model read, in order."""
    last = fake.requests[-1].body["messages"]
    return [
        block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
        for message in last
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def check(outcome: dict[str, Any], root: Path, fake: FakeAnthropic, log: str = "") -> None:
    """Every edit applied, exactly, in the editor's buffers; neither editor saves them; and
    the model is told just that."""
    assert outcome["result"]["edits"] == {"applied": 3, "rejected": 0, "partly": 0}, outcome
    assert outcome["buffer"] == EDITED
    assert outcome["new"] == NOTES
    assert (root / "app.py").read_text() == SOURCE
    results = told(fake)
    assert [r.split("\n")[0] for r in results] == [
        "Edited app.py: 1 hunk accepted.",
        "Edited app.py: 1 hunk accepted.",
        "Created notes.md: 1 hunk accepted.",
    ], f"{results}\n{log}"


@pytest.mark.emacs
@needs("emacs", "Debian's emacs-nox and elpa-eglot")
async def test_eglot_1_9(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    script_the_model(fake)
    out = root.parent / "outcome.json"
    # Not -Q: Debian's site-start puts the elpa-* packages on the load path.
    command = ["emacs", "--batch"]
    await run([*command, "-l", str(SCRIPTS / "eglot_task.el")], environment(root, fake, out))
    check(json.loads(out.read_text()), root, fake)


@pytest.mark.debian_nvim
@needs("/usr/bin/nvim", "Debian's neovim (0.7)")
async def test_neovim_0_7(fake: FakeAnthropic, root: Path) -> None:
    (root / "app.py").write_text(SOURCE)
    script_the_model(fake)
    out = root.parent / "outcome.json"
    # /usr/bin/nvim, not the venv's Neovim 0.11 that the plugin's tests use.
    script = f"luafile {SCRIPTS / 'nvim07_task.lua'}"
    command = ["/usr/bin/nvim", "--headless", "--clean", "-c", script, "-c", "qa!"]
    await run(command, environment(root, fake, out))
    # The buffer Neovim makes for notes.md is opened, with the text "\n", before it answers
    # the applyEdit; the edit itself comes in a didChange after (docs/protocol.md, Clients).
    log = root.parent / ".cache" / "nvim" / "lsp.log"
    check(json.loads(out.read_text()), root, fake, log.read_text()[-6000:])
