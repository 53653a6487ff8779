"""Where a plugin's MCP server runs from: its `command` and `cwd` placed in the plugin's
folder (Agent Plugins 1.0, §4.1 and §7.2.1), `${PLUGIN_ROOT}` and `${PLUGIN_DATA}` expanded.

A plugin-relative path begins with `./` (or, as Claude Code writes it, with the root's
variable) and must stay in the plugin's folder as the filesystem resolves it: a link there may
point elsewhere in the plugin, never out of it, so `./../x`, a `bin/` linked outside, and a
root variable followed by `..` are refused. What runs is the resolved path, links and all
taken out, so nothing swapped in by a link later is what was checked. `cwd` may also be in
the plugin's data folder (`${PLUGIN_DATA}`), and stays in it. A bare `command` is looked up
on PATH as any of the user's programs is."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

ROOT_VARIABLES = ("${CLAUDE_PLUGIN_ROOT}", "${PLUGIN_ROOT}")
DATA_VARIABLE = "${PLUGIN_DATA}"
RESERVED = ("PLUGIN_ROOT", "PLUGIN_DATA")
"""What agentls sets in the server's environment itself (§9.1), never the plugin."""

Base = Literal["root", "data"]
_BASES: dict[str, Base] = {**dict.fromkeys(ROOT_VARIABLES, "root"), DATA_VARIABLE: "data"}
_VARIABLE = re.compile("|".join(re.escape(variable) for variable in _BASES))


def place(
    definition: Mapping[str, Any],
    root: Path,
    data: Callable[[], Path],
    layout: str,
) -> dict[str, Any]:
    """The stdio server `definition` with its `command` and `cwd` as absolute paths checked
    to be where they belong, `${PLUGIN_ROOT}`/`${PLUGIN_DATA}` expanded in its args and
    env, and both variables set in its env. Raises ValueError (said to the user)."""
    command, env = definition.get("command"), definition.get("env", {})
    if not isinstance(command, str) or not command.strip():
        raise ValueError("it needs a command")
    if isinstance(env, Mapping) and set(env) & set(RESERVED):
        raise ValueError("its env must not set PLUGIN_ROOT or PLUGIN_DATA: agentls does")
    real_root = real(root, "the plugin's folder")
    folders: dict[Base, Callable[[], Path]] = {
        "root": lambda: real_root,
        "data": lambda: real(data(), "its data folder"),
    }

    def expanded(value: Any) -> Any:
        """One pass (§9.2): a folder's path is never read again for a variable."""
        if not isinstance(value, str):
            return value
        return _VARIABLE.sub(lambda m: str(folders[_BASES[m[0]]]()), value)

    placed = dict(definition)
    placed["command"] = _command(command, real_root, layout)
    args = definition.get("args", [])
    placed["args"] = [expanded(a) for a in args] if isinstance(args, list) else args
    if isinstance(env, Mapping):
        own = {key: expanded(value) for key, value in env.items()}
        placed["env"] = {
            **own,
            "PLUGIN_ROOT": str(real_root),
            "PLUGIN_DATA": str(folders["data"]()),
        }
    cwd = definition.get("cwd")
    if cwd is not None or layout == "agent-plugins":  # §7.2.1: the root when not given
        placed["cwd"] = str(_cwd(cwd if cwd is not None else "./", folders))
    return placed


def _command(command: str, real_root: Path, layout: str) -> str:
    where = _split(command)
    if where is not None and where[0] == "root":
        program = contained(real_root, where[1], f"command {command!r}")
        if not program.is_file() or not os.access(program, os.X_OK):
            raise ValueError(f"command {command!r}: {program} is not an executable file")
        return str(program)
    if "/" not in command:
        return command  # a name, found on PATH when it starts
    if layout == "claude-code" and os.path.isabs(command):
        return command  # a program of the machine's, as Claude Code's plugins may name
    raise ValueError(
        f"command {command!r}: a plugin names its program by a bare name or by a path in "
        "the plugin beginning with ./"
    )


def _cwd(cwd: Any, folders: Mapping[Base, Callable[[], Path]]) -> Path:
    where = _split(cwd) if isinstance(cwd, str) else None
    if where is None:
        raise ValueError(
            f"cwd {cwd!r}: a path beginning with ./, ${{PLUGIN_ROOT}} or ${{PLUGIN_DATA}}"
        )
    base, rest = where
    folder = contained(folders[base](), rest, f"cwd {cwd!r}")
    if not folder.is_dir():
        raise ValueError(f"cwd {cwd!r}: {folder} is not a folder")
    return folder


def _split(value: str) -> tuple[Base, str] | None:
    """Which folder `value` is in (`root` or `data`) and the path under it, or None."""
    if value.startswith("./"):
        return "root", value[2:]
    for variable, base in _BASES.items():
        if value == variable:
            return base, ""
        if value.startswith(variable + "/"):
            return base, value[len(variable) + 1 :]
    return None


def contained(real_base: Path, relative: str, what: str) -> Path:
    """`relative` under `real_base` (itself resolved) as the filesystem resolves it, which
    must stay in `real_base`; raises ValueError where it leaves it or is missing."""
    if "\0" in relative:
        raise ValueError(f"{what}: a NUL character")
    try:
        resolved = Path(os.path.realpath(real_base / relative, strict=True))
    except FileNotFoundError:
        raise ValueError(f"{what}: {real_base / relative} does not exist") from None
    except OSError as error:  # a link loop, a folder not searchable
        raise ValueError(f"{what}: {error.strerror}") from None
    if not resolved.is_relative_to(real_base):
        raise ValueError(f"{what} leads out of {real_base} (to {resolved}): refused")
    return resolved


def real(folder: Path, what: str) -> Path:
    try:
        return Path(os.path.realpath(folder, strict=True))
    except OSError as error:
        raise ValueError(f"{what} {folder}: {error.strerror}") from None
