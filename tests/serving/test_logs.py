"""`--log-file` records no credential (issue 9, a low)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentls.serving import logs
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


def test_a_multi_line_secret_in_the_users_env_does_not_blank_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A value that ends in a line break has an empty last line: redacting that "form" would
    # put [redacted] at every word boundary of every record.
    config = tmp_path / "config" / "agentls"
    config.mkdir(parents=True)
    (config / ".env").write_text('MY_TOKEN="abcdefghij\\n"\nSHORT_KEY=ab\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    log = tmp_path / "agentls.log"
    try:
        logs.configure(str(log))
        logging.getLogger("test").info("POST http://host/v1/messages 200 ab token=abcdefghij")
    finally:
        logging.basicConfig(handlers=[logging.NullHandler()], force=True)
    assert log.read_text().endswith("POST http://host/v1/messages 200 ab token=[redacted]\n")
