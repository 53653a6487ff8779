"""The settings' machinery, for every part's own: a `Setting` row (its key, its check, what
every editor and document shows of it), the checks most rows share, and the `Table` that reads
an object of settings into a typed one, forgiving of bad values.

No part's shape is parsed here: each part writes its rows and the dataclass of its values in its
own module (`models/settings.py`, `permissions/settings.py`, ...), and `agentls/settings/`
assembles them into the one `Settings` object."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One setting, defined once: what parses it, and what every editor and document shows
    of it (the VS Code contribution, the vimdoc and the README are checked against this by
    tests/config/test_settings_contract.py)."""

    key: str
    """The name in the settings object (camelCase)."""
    field: str
    """The attribute of the part's settings (and so of `Settings`)."""
    check: Callable[[Any], Any]
    """The value as `Settings` holds it, from the JSON value; raises ValueError."""
    schema: dict[str, Any]
    """JSON schema of the value, as VS Code's `contributes.configuration` takes it."""
    default: Any
    """The default as JSON (it checks to the `Settings` default)."""
    description: str
    """One or two sentences (markdown)."""
    user_only: bool = False
    """Whether only the user may set it, never a folder: it starts a program, lets commands run
    unasked, chooses where requests or commands go, or what is billed and what it is said to
    cost (VS Code scopes it to the application and ignores it in an untrusted folder)."""
    formerly: str | None = None
    """The name it had before it joined its group: still read, with a note to move it."""


@dataclass(frozen=True, kw_only=True)
class Part:
    """A part's settings: the dataclass of its values, whose `ROWS` define them. The settings
    object is all the parts' dataclasses in one (`agentls/settings/assembly.py`)."""

    ROWS: ClassVar[tuple[Setting, ...]] = ()


def int_in(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"expected a whole number from {low} to {high}")
        return value

    return check


def optional(check: Callable[[Any], int]) -> Callable[[Any], int | None]:
    """`check`, with null meaning the default."""
    return lambda value: None if value is None else check(value)


def seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 600:
        raise ValueError("expected seconds, more than 0 and at most 600")
    return float(value)


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def optional_flag(value: Any) -> bool | None:
    return None if value is None else flag(value)


def _typed(check: Callable[[Any], Any], schema: dict[str, Any]) -> Callable[..., Setting]:
    """The rows of one kind of value: its check and its schema, written once."""

    def row(key: str, field: str, default: Any, description: str, **more: Any) -> Setting:
        """`more`: `user_only`, `formerly`."""
        given = {"key": key, "field": field, "default": default, "description": description}
        return Setting(check=check, schema=schema, **given, **more)

    return row


in_seconds = _typed(seconds, {"type": "number", "exclusiveMinimum": 0, "maximum": 600})
"""A setting of seconds, more than 0 and at most 600."""
boolean = _typed(flag, {"type": "boolean"})
"""A setting of true or false."""


def strings(
    key: str, field: str, check: Callable[[Any], Any], description: str, **more: Any
) -> Setting:
    """A setting of a list of strings, empty by default, each kind with its own `check`;
    `more`: `user_only`, `formerly`."""
    schema = {"type": "array", "items": {"type": "string"}}
    return _typed(check, schema)(key, field, [], description, **more)


def whole(
    key: str,
    field: str,
    low: int,
    high: int,
    default: int,
    description: str,
    *,
    formerly: str | None = None,
) -> Setting:
    """A setting of a whole number from `low` to `high`, the same bounds checked and shown."""
    schema = {"type": "integer", "minimum": low, "maximum": high}
    return _typed(int_in(low, high), schema)(key, field, default, description, formerly=formerly)


CLIENT_ONLY = {"trace", "server"}
"""Settings of the editor clients under the same section (`agentls.trace.server`, the
server command), none of the server's business."""

S = TypeVar("S", bound="DataclassInstance")


class Table(Generic[S]):
    """The rows of a settings dataclass `kind`, and how an object of settings becomes one."""

    def __init__(self, kind: type[S], rows: Iterable[Setting]) -> None:
        self.kind = kind
        self.rows = tuple(rows)
        self.by_key = {row.key: row for row in self.rows}
        unmatched = {row.field for row in self.rows} ^ {f.name for f in fields(kind)}
        if len(self.by_key) != len(self.rows) or unmatched:
            raise ValueError(f"each field of {kind.__name__} needs one row: {sorted(unmatched)}")
        self.renamed = {row.formerly: row.key for row in self.rows if row.formerly}
        """Names a setting had before it joined its group: still read, with a note."""
        self.user_only = frozenset(row.key for row in self.rows if row.user_only)
        """What only the user sets: taken from the user's settings file or the editor's user
        settings, never from a folder's settings nor from a client that could be anyone's."""

    def checked(self, key: str, value: Any) -> Any:
        """`value` for the setting `key`, as the settings object would take it; raises
        ValueError."""
        return self.by_key[key].check(value)

    def with_user_only(self, settings: S, source: S) -> S:
        """`settings` with every user-only setting as `source` has it."""
        names = [self.by_key[key].field for key in self.user_only]
        return replace(settings, **{name: getattr(source, name) for name in names})

    def flattened(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """`{"webFetch": {"allowHosts": [...]}}` (a JSON file, a Lua table) as the dotted keys
        `webFetch.allowHosts` that VS Code's settings use: flattened before anything sorts the
        user-only keys out, so a nested one is never mistaken for another."""
        flat: dict[str, Any] = {}
        for key, value in raw.items():
            nested = isinstance(value, Mapping) and key not in self.by_key
            if nested and any(name.startswith(f"{key}.") for name in self.by_key):
                flat.update((f"{key}.{inner}", item) for inner, item in value.items())
            else:
                flat[key] = value
        return flat

    def parse(self, raw: Any) -> tuple[S, list[str]]:
        """Settings from the client's object; each bad value is reported and left at its
        default."""
        settings = self.kind()
        if raw is None:
            return settings, []
        if not isinstance(raw, Mapping):
            return settings, ["agentls settings must be an object; using the defaults"]
        problems = []
        values: dict[str, Any] = {}
        given = self.flattened(raw)
        for key, value in given.items():
            if key in CLIENT_ONLY:
                continue
            if key in self.renamed:
                key, note = self._renamed(key, given)
                problems.append(note)
                if key in given:  # the group's own value wins
                    continue
            if key not in self.by_key:
                problems.append(f"unknown setting agentls.{key} is ignored")
                continue
            name = self.by_key[key].field
            try:
                values[name] = self.checked(key, value)
            except ValueError as error:
                default = getattr(settings, name)
                problems.append(f"agentls.{key}: {error}; using the default {default!r}")
        return replace(settings, **values), problems

    def _renamed(self, old: str, given: Mapping[str, Any]) -> tuple[str, str]:
        """The setting's name now, and the note that says so (deprecated, still read)."""
        new = self.renamed[old]
        group, inner = new.split(".")
        used = f"agentls.{new} is also set and is used" if new in given else "it is still read"
        return new, (
            f"agentls.{old} is deprecated: write it as {inner} in the {group} group "
            f'(`"{group}": {{"{inner}": ...}}`, or agentls.{new}); {used}'
        )
