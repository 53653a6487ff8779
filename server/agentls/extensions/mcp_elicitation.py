"""A server's question to the user (MCP elicitation, form mode): put to whoever the door
reaches (`mcp_user.current()`), with the schema's defaults in place (SEP-1034), and the answer
checked against the form before it goes back. URL mode is a link to open: shown and opened,
and accepted (the server learns the outcome itself).

The terminal's prompt per field is here too (`ask_fields`), so any door that asks line by
line reads the same: the field's title, its choices, its default (Enter keeps it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .mcp_user import Answer, current, open_in_browser

Fields = dict[str, Any]


def defaults(schema: dict[str, Any]) -> Fields:
    """Each field's default, where the schema gives one."""
    return {
        name: field["default"]
        for name, field in (schema.get("properties") or {}).items()
        if isinstance(field, dict) and "default" in field
    }


def completed(schema: dict[str, Any], content: Fields) -> Fields:
    """The answer with the defaults of the fields left out (SEP-1034), and each value of the
    type its field asks for (a form answered as text brings strings)."""
    properties = schema.get("properties") or {}
    answer = {**defaults(schema), **{k: v for k, v in content.items() if v is not None}}
    return {name: typed(properties.get(name, {}), value) for name, value in answer.items()}


def typed(field: dict[str, Any], value: Any) -> Any:
    """`value` as the field's type; raises ValueError when it cannot be."""
    kind = field.get("type")
    if kind == "boolean" and isinstance(value, str):
        word = value.strip().lower()
        if word in ("y", "yes", "true", "1"):
            return True
        if word in ("n", "no", "false", "0"):
            return False
        raise ValueError("yes or no")
    if kind == "integer" and isinstance(value, str):
        return int(value.strip())
    if kind == "number" and isinstance(value, str):
        return float(value.strip())
    if kind == "array" and isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    choices = _choices(field)
    if choices and isinstance(value, str) and value not in choices:
        raise ValueError(f"one of {', '.join(choices)}")
    return value


def _choices(field: dict[str, Any]) -> list[str]:
    if isinstance(field.get("enum"), list):
        return [str(choice) for choice in field["enum"]]
    one_of = field.get("oneOf") or field.get("anyOf") or []
    return [str(item["const"]) for item in one_of if isinstance(item, dict) and "const" in item]


def field_list(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The form's fields as a door's client shows them (docs/protocol.md, `agent/elicit`):
    name, title, description, type, choices, default, whether required; in the schema's
    order."""
    required = set(schema.get("required") or [])
    fields = []
    for name, field in (schema.get("properties") or {}).items():
        field = field if isinstance(field, dict) else {}
        fields.append(
            {
                "name": name,
                "title": field.get("title") or name,
                "description": field.get("description") or "",
                "type": field.get("type") or "string",
                "choices": _choices(field) or None,
                "default": field.get("default"),
                "required": name in required,
            }
        )
    return fields


def missing(schema: dict[str, Any], content: Fields) -> list[str]:
    return [name for name in schema.get("required") or [] if content.get(name) in (None, "")]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return ", ".join(value) if isinstance(value, list) else str(value)


async def ask_fields(
    schema: dict[str, Any],
    ask: Callable[[str], Awaitable[str | None]],
    say: Callable[[str], None],
) -> Fields | None:
    """Each field asked by `ask(question)` (a line, None when the input ended: the form is
    cancelled); Enter keeps the default, a wrong value is `say`d and asked again."""
    content: Fields = {}
    required = set(schema.get("required") or [])
    for name, field in (schema.get("properties") or {}).items():
        field = field if isinstance(field, dict) else {}
        label = field.get("title") or name
        about = f" ({field['description']})" if field.get("description") else ""
        choices = _choices(field)
        offered = f" [{'/'.join(choices)}]" if choices else ""
        if field.get("type") == "boolean":
            offered = " [yes/no]"
        default = f" (Enter: {_shown(field['default'])})" if "default" in field else ""
        star = "*" if name in required else ""
        while True:
            line = await ask(f"  {label}{star}{about}{offered}{default}: ")
            if line is None:
                return None
            if not line.strip():
                break  # the default, or left out
            try:
                content[name] = typed(field, line.strip())
                break
            except ValueError as error:
                say(f"  {error}")
    return content


async def elicit(server: str, params: Any, workspace: Path | None = None) -> Answer:
    """The server's question put to the user; the answer completed with the defaults. A
    URL to open is opened by a browser found outside `workspace`, the folder it serves."""
    if getattr(params, "mode", "form") == "url":
        current().open_url(server, params.url, params.message)
        open_in_browser(params.url, workspace)
        return Answer("accept")
    schema = dict(params.requested_schema or {})
    answer = await current().elicit(server, params.message, schema)
    if answer.action != "accept":
        return answer
    try:
        content = completed(schema, answer.content)
    except ValueError as error:
        return Answer("decline", reason=f"the answer did not fit the form: {error}")
    if absent := missing(schema, content):
        return Answer("decline", reason=f"the answer left out {', '.join(absent)}")
    return Answer("accept", content)


def callback(server: str, workspace: Path | None = None) -> Any:
    """The SDK's elicitation callback for `server`, which serves `workspace`."""
    import mcp_types as types

    async def answer(context: Any, params: Any) -> Any:
        given = await elicit(server, params, workspace)
        if given.action == "accept":
            content = given.content if getattr(params, "mode", "form") != "url" else None
            return types.ElicitResult(action="accept", content=content)
        meta = {"agentls/reason": given.reason} if given.reason else None
        return types.ElicitResult(action=given.action, _meta=meta)

    return answer
