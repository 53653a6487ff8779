"""The arguments of the commands that start a task (`agent.runTask`,
`agent.runInBackground`), checked once into `TaskArguments`; and what the model is told of the
file a task was given in, and of its selection: converting the command's LSP arguments."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path
from pygls.workspace import Workspace

from ..agent.prompt import FileContext
from ..disk.paths import relative


def _position(value: Any) -> types.Position:
    try:
        line, character = value["line"], value["character"]
    except (KeyError, TypeError):
        raise JsonRpcInvalidParams("selection must be an LSP Range") from None
    if not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (line, character)
    ):
        raise JsonRpcInvalidParams("selection positions need whole line and character numbers")
    return types.Position(line, character)


def file_context(workspace: Workspace, root: Path, uri: str, selection: Any) -> FileContext:
    path = Path(to_fs_path(uri) or uri)
    name = relative(root, path) if path.is_absolute() else uri
    document = workspace.text_documents.get(unquote(uri))
    language = document.language_id if document is not None else None
    if selection is None:
        return FileContext(name, language)
    if not isinstance(selection, dict):
        raise JsonRpcInvalidParams("selection must be an LSP Range")
    start, end = _position(selection.get("start")), _position(selection.get("end"))
    text = ""
    if document is not None and (start.line, start.character) != (end.line, end.character):
        # offset_at_position converts from the client's units (and clamps).
        text = document.source[
            document.offset_at_position(start) : document.offset_at_position(end)
        ]
    # A selection that ends at the start of a line (whole lines selected) does not hold it.
    last = end.line if end.character == 0 and end.line > start.line else end.line + 1
    return FileContext(
        name,
        language,
        cursor_line=end.line + 1,
        selection=text or None,
        selection_lines=(start.line + 1, last) if text else None,
    )


@dataclass(frozen=True)
class TaskArguments:
    """`{"task": "...", "uri"?: "...", "selection"?: Range, "images"?: [...]}`, checked."""

    task: str
    uri: str | None
    selection: Any
    """An LSP Range, checked when the file's context is made (`file`)."""
    images: Any
    """agent.runTask's images, checked as they are read (`commands.task_images`)."""

    def file(self, workspace: Workspace, root: Path) -> FileContext | None:
        """The file the task was given in, if it was, and its selection."""
        if not self.uri:
            return None
        return file_context(workspace, root, self.uri, self.selection)


def task_arguments(command: str, arguments: tuple[Any, ...]) -> TaskArguments:
    """The one object argument of a command that starts a task, or JsonRpcInvalidParams."""
    if (
        len(arguments) != 1
        or not isinstance(arguments[0], dict)
        or not isinstance(arguments[0].get("task"), str)
        or not arguments[0]["task"].strip()
    ):
        raise JsonRpcInvalidParams(
            f'{command} takes one argument: {{"task": "...", "uri"?: ..., "selection"?: ...}}'
        )
    given = arguments[0]
    uri = given.get("uri")
    if uri is not None and not isinstance(uri, str):
        raise JsonRpcInvalidParams("uri must be a document URI string")
    return TaskArguments(given["task"], uri, given.get("selection"), given.get("images", []))
