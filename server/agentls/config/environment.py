"""Where settings and secrets come from, and keeping secrets away from child processes and
the model.

Three sources, and what each may do:
- the process environment and the user's config file (`~/.config/agentls/.env`) are the
  user's: they configure the model client (the environment wins, name by name, except that a
  service's key and endpoint come from the same source unless the shell exports the endpoint);
- the workspace's `.env` belongs to the repository, which may be hostile: it configures
  nothing; its secret values are only read so that they are redacted.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..disk.files import NotText, read_text
from ..redaction import forms_of, in_redaction_order, is_secret, secret_values

_CREDENTIAL_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")
_ENDPOINT_SUFFIXES = ("_BASE_URL", "_API_BASE")
_CONNECTION_SUFFIXES = (*_CREDENTIAL_SUFFIXES, *_ENDPOINT_SUFFIXES)
"""A service's connection: `X_API_KEY` or `X_AUTH_TOKEN` and `X_BASE_URL` (or `X_API_BASE`)
for any X (ANTHROPIC, OPENAI, DEEPSEEK, OPENROUTER, AGENTLS, ...)."""


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentls"


_ASSIGNMENT = re.compile(r"\s*(?:export\s+)?[^=]*=\s*(.*?)\s*$", re.DOTALL)


def _as_written(original: str) -> str:
    """The value part of a `.env` line as it stands in the file, quotes and comment off."""
    match = _ASSIGNMENT.match(original)
    written = match.group(1) if match else original
    if written[:1] in ("'", '"') and written.rfind(written[0]) > 0:
        return written[1 : written.rfind(written[0])]
    return written.split(" #", 1)[0].rstrip()


@dataclass(frozen=True)
class DotEnv:
    """One `.env` file: its values, and every form of its secret values (shadowed or not)."""

    values: dict[str, str]
    secrets: frozenset[str]

    @classmethod
    def read(cls, path: Path) -> DotEnv:
        try:
            # Non-blocking and regular files only: a FIFO named .env must not hold the server.
            text = read_text(path.parent, path, follow=True)
        except (OSError, NotText):  # missing, a folder, not text: no values
            return cls({}, frozenset())
        # Imported only when there is a file: not at start-up.
        from dotenv import dotenv_values
        from dotenv.parser import parse_stream

        values = {k: v for k, v in dotenv_values(stream=io.StringIO(text)).items() if v}
        forms: set[str] = set()
        for binding in parse_stream(io.StringIO(text)):
            if binding.key is None or binding.value is None:
                continue
            value = values.get(binding.key, binding.value)
            if is_secret(binding.key, binding.value) or is_secret(binding.key, value):
                forms |= forms_of(binding.value, _as_written(binding.original.string))
                forms |= forms_of(value)
        return cls(values, frozenset(forms))


def _service(name: str) -> str | None:
    upper = name.upper()
    return next((upper[: -len(s)] for s in _CONNECTION_SUFFIXES if upper.endswith(s)), None)


def _is_credential(name: str) -> bool:
    return name.upper().endswith(_CREDENTIAL_SUFFIXES)


def _is_endpoint(name: str) -> bool:
    return name.upper().endswith(_ENDPOINT_SUFFIXES)


def client_settings(sources: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """The user's sources merged for the model client; the first is the shell's environment
    and wins.

    Name by name, except a service's connection: its key and its endpoint come together from
    the first source that holds a key for it (else from the first that names the service), so
    a file's key goes to the endpoint set beside it or to the service's own, and a file's
    endpoint never receives a key from elsewhere. An endpoint the shell exports wins all the
    same, wherever the key lies: a gateway or proxy the user exported is where requests go.
    """
    values: dict[str, str] = {}
    for source in reversed(sources):
        values.update(source)
    for service in {s for source in sources for name in source if (s := _service(name))}:
        of_service = [
            {k: v for k, v in source.items() if _service(k) == service} for source in sources
        ]
        with_key = (n for n in of_service if any(_is_credential(k) for k in n))
        chosen = next(with_key, next(names for names in of_service if names))
        exported = {k: v for k, v in of_service[0].items() if _is_endpoint(k)}
        if exported:
            chosen = {k: v for k, v in chosen.items() if not _is_endpoint(k)} | exported
        for names in of_service:
            for name in names:
                values.pop(name, None)
        values.update(chosen)
    return values


def origin(name: str) -> str:
    """Where the model client's variable `name` comes from, for messages: the shell's
    environment wins, else the user's config file (only sensible for a name it holds)."""
    return "the environment" if os.environ.get(name) else str(config_dir() / ".env")


@dataclass(frozen=True)
class Environment:
    """What the model client may use, and every secret never to show."""

    client: dict[str, str]
    secrets: tuple[str, ...]


def user_client() -> dict[str, str]:
    """The user's own sources (the environment over the config `.env`) merged for the model
    client: what `load` gives the client, without reading any workspace."""
    user = DotEnv.read(config_dir() / ".env")
    return client_settings([{k: v for k, v in os.environ.items() if v}, user.values])


def load(root: Path) -> Environment:
    """The environment over the user's config `.env` for the client; the workspace `.env`
    only for its secrets.

    The files are read, never exported: what they hold reaches the model client only, so
    a key kept in `.env` cannot leak into a shell command by some unforeseen name.
    """
    user = DotEnv.read(config_dir() / ".env")
    workspace = DotEnv.read(root / ".env")
    # An empty variable is taken as unset, so `ANTHROPIC_API_KEY=` cannot hide the file's key.
    process = {k: v for k, v in os.environ.items() if v}
    client = client_settings([process, user.values])
    forms = set(secret_values(process)) | user.secrets | workspace.secrets
    return Environment(client, in_redaction_order(forms))
