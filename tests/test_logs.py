"""`--log-file` records no credential (issue 9, a low)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentls import logs
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


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """The root logger, as it was before the test configured it."""
    logger = logging.getLogger()
    handlers, level = logger.handlers[:], logger.level
    yield logger
    for handler in logger.handlers:
        handler.close()
    logger.handlers[:], logger.level = handlers, level


def test_the_log_file_says_when(tmp_path: Path, root_logger: logging.Logger) -> None:
    log = tmp_path / "agentls.log"
    logs.configure(str(log))
    logging.getLogger("agentls.lsp.tcp").warning("closed a connection")
    line = log.read_text()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} WARNING agentls\.lsp\.tcp: closed a connection\n",
        line,
    ), line


def test_a_warning_in_the_terminal_says_who_wrote_it(
    root_logger: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    logs.configure(None)
    logging.getLogger("agentls.lsp.tcp").warning("closed a connection")
    assert capsys.readouterr().err == "agentls: WARNING: closed a connection\n"
