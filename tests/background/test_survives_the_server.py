"""A background task runs in its own process: killing the language server (the editor
closed, a crash) leaves it running, and a new server lists it from disk."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from background_tasks import gated, git, make_repository, wait_for_status
from fake_api import FakeAnthropic, reply, text, tool_use
from lsp_pipe import ServerPipe


def command(server: ServerPipe, name: str, *arguments: Any) -> Any:
    params = {"command": name, "arguments": list(arguments)}
    return server.request("workspace/executeCommand", params)


async def test_killing_the_server_leaves_the_task_running_and_listed(
    fake: FakeAnthropic, root: Path
) -> None:
    make_repository(root, {"a.py": "a = 0\n"})
    go = threading.Event()
    edit = {"path": "a.py", "old_text": "a = 0", "new_text": "a = 1"}
    fake.script_for("Slowly.", gated(go, reply(tool_use("edit_file", edit))), reply(text("Done.")))
    first = await ServerPipe.start(root, fake.url)
    started = await command(first, "agent.runInBackground", {"task": "Slowly."})
    await wait_for_status(
        lambda: command(first, "agent.backgroundTasks"), started["id"], {"running"}
    )
    first.process.kill()
    await first.process.wait()

    second = await ServerPipe.start(root, fake.url)
    try:
        listed = await command(second, "agent.backgroundTasks")
        assert [(i["id"], i["status"]) for i in listed] == [(started["id"], "running")]
        go.set()
        item = await wait_for_status(
            lambda: command(second, "agent.backgroundTasks"), started["id"], {"done"}
        )
        assert item["files"] == ["a.py"]
        assert git(root, "show", f"{started['branch']}:a.py") == "a = 1\n"
        # Told by the watch of the new server (read already, or still to come).
        told = [m for m in second.received if m.get("method") == "agent/backgroundTask"]
        if not told:
            told = [await asyncio.wait_for(second.wait_for("agent/backgroundTask"), 30)]
        assert told[-1]["params"]["id"] == started["id"]
    finally:
        second.process.kill()
        await second.process.wait()
