"""Plugins: folders that bundle skills, commands, agents, hooks and MCP servers, installed by
the user (`agentls plugin add PATH`, recorded under `plugins` in the user's settings file).

Two layouts load: Claude Code's (`.claude-plugin/plugin.json`; `skills/`, `commands/`,
`agents/`, `hooks/hooks.json`, `.mcp.json` at the plugin's root) and Agent Plugins 1.0's
(`plugin.json` at the root; `skills/`, `mcp.json`). A plugin is the user's own choice, so
its hooks and MCP servers are the user's (on the host, in a private folder: the launcher),
its skills and commands are named `plugin:name`, and `${CLAUDE_PLUGIN_ROOT}` (Claude Code's
variable) and `${PLUGIN_ROOT}` in its definitions are its folder."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..config import user_settings
from ..disk import files
from ..disk.state import private_dir, state_base
from . import plugin_paths
from .hooks import Hook, parse_hooks
from .mcp_config import ServerSpec, parse_servers

log = logging.getLogger(__name__)

Layout = Literal["claude-code", "agent-plugins"]
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class Plugin:
    name: str
    folder: Path
    layout: Layout
    description: str = ""
    version: str = ""

    @property
    def prefix(self) -> str:
        """What its skills' and commands' names start with."""
        return f"{self.name}:"

    def _json(self, relative: str, expand: bool = True) -> dict[str, Any]:
        path = self.folder / relative
        if not path.is_file():
            return {}
        try:
            loaded = json.loads(files.read_text(self.folder, path, follow=True))
        except (OSError, ValueError, files.NotText) as error:
            log.warning("plugin %s: %s is ignored: %s", self.name, relative, error)
            return {}
        if not isinstance(loaded, dict):
            return {}
        return _with_root(loaded, self.folder) if expand else loaded

    def hooks(self) -> tuple[Hook, ...]:
        """Claude Code's `hooks/hooks.json` (`{"hooks": {...}}` or the events at the top)."""
        raw = self._json("hooks/hooks.json")
        raw = raw.get("hooks", raw) if isinstance(raw.get("hooks", raw), dict) else {}
        try:
            return parse_hooks({k: v for k, v in raw.items() if k != "description"})
        except ValueError as error:
            log.warning("plugin %s: its hooks are ignored: %s", self.name, error)
            return ()

    def mcp_servers(self) -> tuple[tuple[ServerSpec, ...], list[str]]:
        """`.mcp.json` (Claude Code) or `mcp.json` (Agent Plugins): `{"mcpServers": {...}}`
        or the servers at the top; each named `plugin:server` would break the tool names,
        so `plugin_server`. A program's `command` and `cwd` in the plugin are placed there
        (`plugin_paths.place`); a server that does not fit is left out, and said why."""
        raw = self._json(".mcp.json" if self.layout == "claude-code" else "mcp.json", False)
        servers = raw.get("mcpServers", raw)
        if not isinstance(servers, dict):
            return (), []
        specs: list[ServerSpec] = []
        problems: list[str] = []
        for name, definition in servers.items():
            if name == "$schema":
                continue
            try:
                if isinstance(definition, dict) and "url" not in definition:
                    definition = plugin_paths.place(
                        definition, self.folder, self.data_folder, self.layout
                    )
                else:
                    definition = _with_root(definition, self.folder)
                named = f"{self.name}_{name}".replace(".", "_")
                specs.extend(parse_servers({named: definition}))
            except (ValueError, OSError) as error:
                problems.append(f"plugin {self.name}: its MCP server {name} is left out: {error}")
        return tuple(specs), problems

    def lsp_servers(self) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """Claude Code's language servers: `lspServers` in the manifest (the servers, or the
        path of a JSON file in the plugin that holds them), else `.lsp.json` at the root. A
        program is placed as an MCP server's is (`plugin_paths.place`), the root's variable
        expanded in the rest; one that does not fit is left out, and said why."""
        if self.layout != "claude-code":
            return {}, []
        listed = self._json(".claude-plugin/plugin.json", False).get("lspServers", "./.lsp.json")
        problems: list[str] = []
        if isinstance(listed, str):
            try:
                where = plugin_paths.contained(self.real_folder(), listed, "lspServers")
                listed = self._json(str(where.relative_to(self.real_folder())), False)
            except ValueError as error:
                explicit = listed != "./.lsp.json"
                return {}, [f"plugin {self.name}: {error}"] if explicit else []
        servers: dict[str, dict[str, Any]] = {}
        for name, definition in listed.items() if isinstance(listed, dict) else ():
            try:
                if not isinstance(definition, dict):
                    raise ValueError("it must be an object")
                placed = plugin_paths.place(definition, self.folder, self.data_folder, self.layout)
                servers[name] = {**_with_root(definition, self.folder), **placed}
            except (ValueError, OSError) as error:
                why = f"its language server {name} is left out: {error}"
                problems.append(f"plugin {self.name}: {why}")
        return servers, problems

    def real_folder(self) -> Path:
        """Its folder as the filesystem resolves it (ValueError when it is gone)."""
        return plugin_paths.real(self.folder, "the plugin's folder")

    def data_folder(self) -> Path:
        """`${PLUGIN_DATA}`: the plugin's own folder for what it keeps (Agent Plugins §9.1),
        private, kept across its updates; made when first asked for."""
        return private_dir(state_base() / "plugin-data" / self.name)

    def skills_folder(self) -> Path:
        return self.folder / "skills"

    def commands_folder(self) -> Path:
        return self.folder / "commands"

    def agent_files(self) -> list[Path]:
        """Its `agents/*.md`: subagent definitions, for the subagents' loader to read."""
        folder = self.folder / "agents"
        return sorted(folder.glob("*.md")) if folder.is_dir() else []


def _with_root(value: Any, folder: Path) -> Any:
    """`${CLAUDE_PLUGIN_ROOT}` in every string of a definition replaced by the folder."""
    if isinstance(value, str):
        for variable in plugin_paths.ROOT_VARIABLES:
            value = value.replace(variable, str(folder))
        return value
    if isinstance(value, list):
        return [_with_root(item, folder) for item in value]
    if isinstance(value, dict):
        return {key: _with_root(item, folder) for key, item in value.items()}
    return value


def load(path: Path) -> Plugin:
    """The plugin in the folder `path`; raises ValueError when it is none."""
    folder = path.expanduser().absolute()
    for manifest, layout in (
        (".claude-plugin/plugin.json", "claude-code"),
        ("plugin.json", "agent-plugins"),
    ):
        if (folder / manifest).is_file():
            try:
                raw = json.loads(files.read_text(folder, folder / manifest, follow=True))
            except (OSError, ValueError, files.NotText) as error:
                raise ValueError(f"{folder / manifest} cannot be read: {error}") from None
            if not isinstance(raw, dict):
                raise ValueError(f"{folder / manifest} must hold an object")
            name = raw.get("name") or folder.name
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise ValueError(f"{folder / manifest}: the name {name!r} is not a plain name")
            description, version = raw.get("description", ""), raw.get("version", "")
            return Plugin(name, folder, layout, str(description), str(version))  # type: ignore[arg-type]
    raise ValueError(f"{folder} holds neither .claude-plugin/plugin.json nor plugin.json")


def installed(paths: tuple[str, ...]) -> tuple[list[Plugin], list[str]]:
    """The plugins of the `plugins` setting and of the user's settings file (where `agentls
    plugin add` records them, whichever door runs), and what could not be loaded."""
    recorded = _recorded()
    plugins: list[Plugin] = []
    problems: list[str] = []
    for path in dict.fromkeys([*paths, *recorded]):
        try:
            plugin = load(Path(path))
        except ValueError as error:
            problems.append(f"plugin {path}: {error}")
            continue
        if all(p.name != plugin.name for p in plugins):
            plugins.append(plugin)
    return plugins, problems


def _recorded() -> list[str]:
    raw = _settings_file()
    listed = raw.get("plugins", [])
    return [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []


def _settings_file() -> dict[str, Any]:
    path = user_settings.settings_path()
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise OSError(f"{path} cannot be read: {error}") from None
    if not isinstance(loaded, dict):
        raise OSError(f"{path} must hold a settings object")
    return loaded


def _write(raw: dict[str, Any]) -> None:
    path = user_settings.settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write_atomic(path.parent, path, json.dumps(raw, indent=2) + "\n")


def add(path: Path) -> Plugin:
    """Record the plugin at `path` in the user's settings; raises ValueError or OSError."""
    plugin = load(path)
    raw = _settings_file()
    listed = [p for p in raw.get("plugins", []) if isinstance(p, str)]
    for other in listed:
        try:
            known = load(Path(other))
        except ValueError:
            continue
        if known.name == plugin.name and known.folder != plugin.folder:
            raise ValueError(f"a plugin named {plugin.name} is installed from {known.folder}")
    if str(plugin.folder) not in listed:
        raw["plugins"] = [*listed, str(plugin.folder)]
        _write(raw)
    return plugin


def remove(name: str) -> str | None:
    """Forget the plugin named `name` (or recorded at that path); its folder, or None."""
    raw = _settings_file()
    listed = [p for p in raw.get("plugins", []) if isinstance(p, str)]
    for path in listed:
        try:
            found = load(Path(path)).name
        except ValueError:
            found = ""
        if name in (found, path):
            raw["plugins"] = [p for p in listed if p != path]
            _write(raw)
            return path
    return None
