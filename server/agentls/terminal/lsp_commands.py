"""`agentls lsp list`: the language servers a task started in this folder could use outside
the editor (the `lspServers` setting, the user's plugins', the built-in ones found on PATH,
the repository's `.lsp.json` ones), and which of the repository's wait for approval (`agentls
lsp approve NAME`, which `mcp_commands.approve` serves). Nothing is started here."""

from __future__ import annotations

import shlex
from pathlib import Path

from ..config import project_settings, user_settings
from ..extensions import plugins
from ..extensions.mcp_config import ServerSpec
from ..extensions.trust import Trust
from ..eyes import sources
from ..eyes.definitions import ServerDefinition
from ..eyes.session import definitions
from ..settings.user import load as load_user_settings


def _line(definition: ServerDefinition) -> str:
    return shlex.join([definition.command, *definition.args])


def list_servers() -> int:
    root = Path.cwd()
    settings, problems = load_user_settings()
    found, wrong = plugins.installed(settings.plugins)
    plugged, left_out = sources.from_plugins(found)
    project = project_settings.load(root)
    theirs, refused = sources.from_project(project.lsp_servers)
    unread = [p for p in project.problems if p.startswith(str(project_settings.LSP_FILE))]
    for problem in (*problems, *wrong, *left_out, *unread, *refused):
        print(f"agentls: {problem}")
    configured = {d.name for d in settings.lsp_servers}
    for definition in settings.lsp_servers:
        off = " (disabled)" if definition.disabled else ""
        print(f"{definition.name} (settings){off}: {_line(definition)}")
    for definition in plugged:
        print(f"{definition.name} (plugin): {_line(definition)}")
    for definition in definitions(settings.lsp_servers, root):
        if definition.name not in configured:
            print(f"{definition.name} (built-in, found on PATH): {_line(definition)}")
    trust = Trust(root)
    for name, raw in theirs:
        shown = ServerSpec(name, raw).described()
        if name in configured:
            print(f"{name} (project): not used, a server of yours has that name: {shown}")
        elif trust.approved(sources.KIND, name, raw):
            where = "" if settings.sandbox == "off" else ", runs in the sandbox"
            print(f"{name} (project): approved{where}: {shown}")
        else:
            print(f"{name} (project): waiting for approval: {shown}")
            print(f"  agentls lsp approve {name}")
    if not (settings.lsp_servers or plugged or theirs or definitions((), root)):
        print(f"No language servers: add them under lspServers in {user_settings.settings_path()}")
    return 0
