"""Where settings and secrets come from, and keeping secrets away from child processes."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_SECRET_NAMES = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"}
_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PWD", "_PAT", "_PRIVATE_KEY")
_SECRET_WORDS = ("SECRET", "PASSWORD", "PASSWD")
_URL_CREDENTIALS = re.compile(r"://[^/\s@]*:[^/\s@]+@")


def is_secret(name: str, value: str) -> bool:
    """A variable a shell command must not see: by its name, or a URL holding a password."""
    upper = name.upper()
    return (
        upper in _SECRET_NAMES
        or upper.endswith(_SECRET_SUFFIXES)
        or any(word in upper for word in _SECRET_WORDS)
        or bool(_URL_CREDENTIALS.search(value))
    )


def scrubbed(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the variables a shell command must not see."""
    return {name: value for name, value in env.items() if not is_secret(name, value)}


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the secret variables, longest first; short ones would redact too much."""
    values = {value for name, value in env.items() if is_secret(name, value) and len(value) >= 8}
    return tuple(sorted(values, key=len, reverse=True))


REDACTED = "[redacted]"


def redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        # A multi-line secret keeps its line breaks, so line numbers after it stay true.
        text = text.replace(secret, REDACTED + "\n" * secret.count("\n"))
    return text


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentls"


def merged(root: Path) -> dict[str, str]:
    """The process environment over the workspace's `.env` over the user's config `.env`.

    The files are read, never exported: what they hold reaches the model client only, so
    a key kept in `.env` cannot leak into a shell command by some unforeseen name.
    """
    values: dict[str, str] = {}
    for path in (config_dir() / ".env", root / ".env"):
        if path.is_file():
            from dotenv import dotenv_values  # only when there is a file: not at start-up

            values.update({k: v for k, v in dotenv_values(path).items() if v is not None})
    # An empty variable is taken as unset, so `ANTHROPIC_API_KEY=` cannot hide the file's key.
    values.update((k, v) for k, v in os.environ.items() if v)
    return values
