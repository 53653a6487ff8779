"""The server's log (`--log-file`, else stderr), kept free of credentials.

Libraries log what they see: httpx writes every request's URL at INFO, user and password of
an `ANTHROPIC_BASE_URL` like `https://user:pass@proxy/` included. Every record is scrubbed
as it is written: URL credentials, and the values of the secret variables the user set.
"""

from __future__ import annotations

import logging
import os
import re

from ..config.environment import DotEnv, config_dir
from ..redaction import in_redaction_order, redact, secret_values

_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")


_FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_STDERR_FORMAT = "agentls: %(levelname)s: %(message)s"
"""Stderr is a terminal (`agentls --tcp`) or the editor's log of the server, which dates
each line itself."""


class ScrubbingFormatter(logging.Formatter):
    def __init__(self, secrets: tuple[str, ...], form: str) -> None:
        super().__init__(form)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        text = _USERINFO.sub(r"\1[redacted]@", super().format(record))
        return redact(text, self.secrets)


def configure(log_file: str | None) -> None:
    """Log to `log_file` (INFO) or to stderr (warnings only); never to stdout, the LSP
    channel."""
    secrets = set(secret_values(os.environ))
    if log_file:
        # Not for stderr's warnings: it would cost every start-up the import of dotenv.
        secrets |= DotEnv.read(config_dir() / ".env").secrets
    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler()
    form = _FILE_FORMAT if log_file else _STDERR_FORMAT
    handler.setFormatter(ScrubbingFormatter(in_redaction_order(secrets), form))
    logging.basicConfig(
        handlers=[handler], level=logging.INFO if log_file else logging.WARNING, force=True
    )
