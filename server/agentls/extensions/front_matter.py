"""The YAML front matter of the Markdown files a repository or a plugin brings (skills,
`/` commands, subagent definitions): the one place it is parsed, bounded before it is.

It is parsed before anyone approved the file (to list it, to ask about it), so it is read
as an attacker would write it. At most `MAX_CHARS` characters are parsed. Anchors and aliases
(`&a`, `*a`) are refused while the document is composed, before anything is built: a
"billion laughs" of a few hundred bytes never grows. Nesting stops at `MAX_DEPTH` levels
(the composer recurses). A tag other than YAML's own (`!!python/...`) is refused, and a
field is kept only as a scalar or a list of scalars: no caller reads more, and nothing
bigger than the text itself can come out.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..config.definition_files import MAX_FILE_BYTES
from ..disk import files

MAX_CHARS = 32 * 1024
"""Characters of front matter parsed at most: names, a description, a few lists."""
SCAN_CHARS = 256 * 1024
"""Characters of front matter parsed at most in one search of a repository's files of one
kind (`scan`): parsing runs at tens of kilobytes a second, and a repository may bring
thousands of files; past it, the rest are skipped, said."""
MAX_DEPTH = 4
"""Levels of nesting composed at most: the fields' mapping, a list, its items, one more."""

Scalar = str | int | float | bool | None
Field = Scalar | list[Scalar]


_LEFT: ContextVar[list[int] | None] = ContextVar("front_matter_left", default=None)
"""What is left of the current scan's characters (a list, to be counted down in place)."""


@contextlib.contextmanager
def scan() -> Iterator[None]:
    """A search of a repository's files, whose front matter counts against SCAN_CHARS."""
    token = _LEFT.set([SCAN_CHARS])
    try:
        yield
    finally:
        _LEFT.reset(token)


def _charge(chars: int) -> None:
    left = _LEFT.get()
    if left is None:
        return
    if chars > left[0]:
        raise ValueError(
            f"the repository's files of this kind have more than {SCAN_CHARS:,} characters of "
            "front matter in all: the rest are not read"
        )
    left[0] -= chars


def read_markdown(base: Path, path: Path, follow: bool) -> str:
    """The text of `path` under `base` (`files.read_text`'s rules), NotText when it is
    larger than MAX_FILE_BYTES: no more than that is read, whatever its size."""
    return files.read_bounded(base, path, MAX_FILE_BYTES, follow=follow)


class _Refused(yaml.YAMLError):
    """What the bounded loader will not compose, with why."""


_SAFE_TAGS = frozenset(tag for tag in yaml.SafeLoader.yaml_constructors if tag is not None)
"""The tags the safe loader builds: YAML's own types, no Python object."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, composing no alias or anchor and nesting at most MAX_DEPTH."""

    _depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            line = event.start_mark.line + 1 if event.start_mark else 0
            raise _Refused(f"it uses YAML anchors or aliases (& or *, line {line})")
        if self._depth >= MAX_DEPTH:
            raise _Refused(f"it nests more than {MAX_DEPTH} levels")
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        # Checked on every node: `!!python/...` on a list would otherwise pass unbuilt.
        if node is not None and node.tag not in _SAFE_TAGS:
            raise _Refused(f"it uses the tag {node.tag}, not one of YAML's own")
        return node


_COLON_VALUE = re.compile(r"^([\w-]+):[ \t]+([^\s\"'\[{|>&*!].*: .*)$", re.MULTILINE)


def _quoted(match: re.Match[str]) -> str:
    value = match[2].rstrip().replace("\\", "\\\\").replace('"', '\\"')
    return f'{match[1]}: "{value}"'


def front_matter(text: str) -> tuple[dict[str, Field], str]:
    """The fields of a Markdown file's front matter and its body (blank lines around it
    removed); raises ValueError saying why when the front matter is missing, too large, not
    YAML, not a mapping of fields or refused."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter (a first line ---, the fields, a line ---)")
    end = next((i for i, line in enumerate(lines) if i and line.strip() == "---"), None)
    if end is None:
        raise ValueError("the front matter has no closing ---")
    written = "".join(lines[1:end])
    if len(written) > MAX_CHARS:
        raise ValueError(
            f"its front matter is {len(written):,} characters, more than the {MAX_CHARS:,} read"
        )
    _charge(len(written))
    try:
        fields = _fields(written)
    except _Refused as refused:
        raise ValueError(f"the front matter is refused: {refused}") from None
    except yaml.YAMLError as error:
        try:  # `description: Use when: ...`, unquoted, as other agents accept it
            fields = _fields(_COLON_VALUE.sub(_quoted, written))
        except yaml.YAMLError:
            mark = getattr(error, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise ValueError(f"the front matter is not YAML{where}") from None
    if fields is None:
        raise ValueError("the front matter is not a mapping of fields")
    return fields, "".join(lines[end + 1 :]).strip("\n")


def _fields(written: str) -> dict[str, Field] | None:
    """The fields of a mapping, each kept as `_kept` says; None for any other document."""
    loader = _BoundedLoader(written)
    try:
        root = loader.get_single_node()
        if not isinstance(root, MappingNode):
            return None
        fields: dict[str, Field] = {}
        for key, value in root.value:
            if isinstance(key, ScalarNode) and (kept := _kept(loader, value)) is not _LEFT_OUT:
                fields[str(_scalar(loader, key))] = kept
        return fields
    finally:
        loader.dispose()


_LEFT_OUT: Any = object()


def _kept(loader: _BoundedLoader, node: Node) -> Any:
    """A field's value as the callers read it: a scalar, a list of scalars, else left out."""
    if isinstance(node, ScalarNode):
        return _scalar(loader, node)
    if isinstance(node, SequenceNode) and all(isinstance(n, ScalarNode) for n in node.value):
        return [_scalar(loader, item) for item in node.value]
    return _LEFT_OUT


def _scalar(loader: _BoundedLoader, node: ScalarNode) -> Scalar:
    """The scalar the safe loader makes of `node`; a date, bytes or a number too long for
    int() as the text written."""
    try:
        value = loader.construct_object(node)
    except ValueError:
        return str(node.value)
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(node.value)
