"""What a secret is, and keeping its value out of what the model, a log or a child sees.

A secret is a variable by its name (`..._API_KEY`, `..._TOKEN`, `...PASSWORD`, ...) or a URL
holding a password. Its value is redacted in every form it can take in a file: as parsed, as
written (quoted, escaped), and line by line."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_SECRET_LAST_WORDS = frozenset(
    ("KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "PAT")
)
_PUBLIC_WORDS = {"PUBLIC", "PUBLISHABLE"}
_SECRET_WORDS = ("SECRET", "PASSWORD", "PASSWD", "PRIVATE_KEY", "API_KEY")
_URL_CREDENTIALS = re.compile(r"://[^/\s@]*:([^/\s@]+)@")

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


def forms_of(value: str, written: str | None = None) -> set[str]:
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
        form for name, value in env.items() if is_secret(name, value) for form in forms_of(value)
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
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if len(secret) >= MIN_SECRET and secret not in text:
            continue  # the common case, without a regular expression
        starts = [start for start, _ in spans]
        new = []
        for match in _pattern(secret).finditer(text):
            start, end = match.span()
            at = bisect.bisect_left(starts, start)
            if (at and spans[at - 1][1] > start) or (at < len(starts) and starts[at] < end):
                continue
            new.append((start, end))
        # Merged once per secret: inserting each span in place moved the list's tail every
        # time, quadratic in a file that repeats a secret on every line.
        spans = sorted(spans + new)
    return spans


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
