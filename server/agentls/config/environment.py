"""Where settings and secrets come from, and keeping secrets away from child processes and
the model.

Three sources, and what each may do:
- the process environment and the user's config file (`~/.config/agentls/.env`) are the
  user's: they configure the model client (the environment wins, name by name, except that a
  service's key and endpoint always come from the same source);
- the workspace's `.env` belongs to the repository, which may be hostile: it configures
  nothing; its secret values are only read so that they are redacted.
"""

from __future__ import annotations

import bisect
import functools
import io
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..disk.files import NotText, read_text

_SECRET_LAST_WORDS = frozenset(
    ("KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "PAT")
)
_PUBLIC_WORDS = {"PUBLIC", "PUBLISHABLE"}
_SECRET_WORDS = ("SECRET", "PASSWORD", "PASSWD", "PRIVATE_KEY", "API_KEY")
_URL_CREDENTIALS = re.compile(r"://[^/\s@]*:([^/\s@]+)@")

_CREDENTIAL_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")
_CONNECTION_SUFFIXES = (*_CREDENTIAL_SUFFIXES, "_BASE_URL", "_API_BASE")
"""A service's connection: `X_API_KEY` or `X_AUTH_TOKEN` and `X_BASE_URL` (or `X_API_BASE`)
for any X (ANTHROPIC, OPENAI, DEEPSEEK, OPENROUTER, AGENTLS, ...)."""

MIN_SECRET = 8
"""A secret at least this long is redacted wherever it occurs."""
MIN_SHORT_SECRET = 4
"""A shorter one, from this length, only where it stands alone and is not a plain word."""


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    words = upper.split("_")
    if any(word in upper for word in _SECRET_WORDS):
        return True
    # One word alone (PWD, KEY, PATH) is the shell's or a tool's, not a credential.
    return len(words) > 1 and words[-1] in _SECRET_LAST_WORDS and words[-2] not in _PUBLIC_WORDS


def is_secret(name: str, value: str) -> bool:
    """A variable a shell command must not see: by its name, or a URL holding a password."""
    return is_secret_name(name) or bool(_URL_CREDENTIALS.search(value))


def scrubbed(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the variables a shell command must not see."""
    return {name: value for name, value in env.items() if not is_secret(name, value)}


def _forms(value: str, written: str | None = None) -> set[str]:
    """Every text a value can show as: itself, as written in a file (quoted, escaped), and each
    line of either, so a multi-line key shown line by line, with CRLF or written with `\\n`
    escapes, is still found."""
    forms = {value, *_URL_CREDENTIALS.findall(value)}
    if written is not None:
        forms.add(written)
    for form in list(forms):
        forms.update(re.split(r"\r?\n|\\r\\n|\\n|\\r", form))
    return {form.strip("\r") for form in forms}


def _redactable(form: str) -> bool:
    if len(form) >= MIN_SECRET:
        return True
    # `test` or `admin` would blank out ordinary words all over the output, and a plain word
    # is no secret worth the name: short values are redacted when they hold a digit or sign.
    return len(form) >= MIN_SHORT_SECRET and not form.isalpha()


def in_redaction_order(forms: Iterable[str]) -> tuple[str, ...]:
    """The forms worth redacting, longest first, so a whole value is redacted before its
    pieces (an empty line of a multi-line value, or a plain short word, is left out)."""
    return tuple(sorted({f for f in forms if _redactable(f)}, key=lambda f: (-len(f), f)))


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The forms of the values of the secret variables in `env`, longest first."""
    return in_redaction_order(
        form for name, value in env.items() if is_secret(name, value) for form in _forms(value)
    )


REDACTED = "[redacted]"


def _pattern(secret: str) -> re.Pattern[str]:
    if len(secret) >= MIN_SECRET:
        return re.compile(re.escape(secret))
    return re.compile(r"(?<![\w])" + re.escape(secret) + r"(?![\w])")


def secret_spans(text: str, secrets: Sequence[str]) -> list[tuple[int, int]]:
    """Where `redact` would replace: sorted, non-overlapping (start, end) spans of `text`.

    The secrets come longest first; a shorter one inside a longer one's span is skipped.
    """
    starts: list[int] = []
    ends: list[int] = []
    for secret in secrets:
        if len(secret) >= MIN_SECRET and secret not in text:
            continue  # the common case, without a regular expression
        for match in _pattern(secret).finditer(text):
            start, end = match.span()
            at = bisect.bisect_left(starts, start)
            if (at and ends[at - 1] > start) or (at < len(starts) and starts[at] < end):
                continue
            starts.insert(at, start)
            ends.insert(at, end)
    return list(zip(starts, ends, strict=True))


def redact(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret replaced by [redacted]; a multi-line secret keeps its line
    breaks, so line numbers after it stay true."""
    parts = []
    position = 0
    for start, end in secret_spans(text, secrets):
        parts.append(text[position:start])
        parts.append(REDACTED + "\n" * text.count("\n", start, end))
        position = end
    if not parts:
        return text
    parts.append(text[position:])
    return "".join(parts)


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
                forms |= _forms(binding.value, _as_written(binding.original.string))
                forms |= _forms(value)
        return cls(values, frozenset(forms))


def _service(name: str) -> str | None:
    upper = name.upper()
    return next((upper[: -len(s)] for s in _CONNECTION_SUFFIXES if upper.endswith(s)), None)


def _is_credential(name: str) -> bool:
    return name.upper().endswith(_CREDENTIAL_SUFFIXES)


def client_settings(sources: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """The user's sources (the first wins) merged for the model client.

    Name by name, except a service's connection: its key and its endpoint come together from
    the first source that holds a key for it (else from the first that names the service), so
    a key is only ever sent to the endpoint set beside it, or to the service's own.
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
        for names in of_service:
            for name in names:
                values.pop(name, None)
        values.update(chosen)
    return values


@dataclass(frozen=True)
class Environment:
    """What the model client may use, and every secret never to show."""

    client: dict[str, str]
    secrets: tuple[str, ...]


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


@dataclass(frozen=True)
class Redacted:
    """A text as the model is shown it, with the way back to the text's own offsets.

    Finding text the model names must happen in what it was shown: a search of the real
    text would tell it, found or not, whether its guess at a secret is right.
    """

    shown: str
    spans: tuple[tuple[int, int, int, int], ...]
    """Each redaction: (start, end) in the text, (start, end) of its marker in `shown`."""

    @classmethod
    def of(cls, text: str, secrets: Sequence[str]) -> Redacted:
        spans = []
        shift = 0
        for start, end in secret_spans(text, secrets):
            marker = len(REDACTED) + text.count("\n", start, end)
            spans.append((start, end, start + shift, start + shift + marker))
            shift += marker - (end - start)
        return cls(redact(text, secrets), tuple(spans))

    def original(self, start: int, end: int) -> tuple[int, int] | None:
        """The text's span shown as `shown[start:end]`, or None if that touches a marker."""
        before = bisect.bisect_right(self._shown_ends, start)
        if before < len(self.spans) and self.spans[before][2] < end:
            return None
        shift = self._shifts[before]
        return start + shift, end + shift

    @functools.cached_property
    def _shown_ends(self) -> list[int]:
        return [shown_end for _, _, _, shown_end in self.spans]

    @functools.cached_property
    def _shifts(self) -> list[int]:
        """How much longer the text is than `shown` before each span (and after the last)."""
        shifts = [0]
        for real_start, real_end, shown_start, shown_end in self.spans:
            shifts.append(shifts[-1] + (real_end - real_start) - (shown_end - shown_start))
        return shifts
