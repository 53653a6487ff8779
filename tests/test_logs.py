"""`--log-file` records no credential (issue 9, a low)."""

from __future__ import annotations

from pathlib import Path

from editor_client import editor
from fake_api import FakeAnthropic, reply, text


async def test_the_log_holds_no_credential_of_the_endpoint(fake: FakeAnthropic, root: Path) -> None:
    log = root.parent / "agentls.log"
    endpoint = fake.url.replace("://", "://proxy-user:hunter2-in-url@")
    fake.script(reply(text("hello")))
    async with editor(root, endpoint, arguments=("--log-file", str(log))) as client:
        await client.run_task("go")
    written = log.read_text()
    assert "HTTP Request: POST http://[redacted]@127.0.0.1" in written
    assert "hunter2" not in written and "proxy-user" not in written
