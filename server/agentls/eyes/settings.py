"""The eyes' setting: the user's language servers (`lspServers`, in the shape
`definitions.py` owns). `agentls/settings/` assembles it with the other parts' settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..config.settings import Part, Setting
from .definitions import ServerDefinition
from .definitions import parse_servers as parse_lsp_servers

ROWS = (
    Setting(
        key="lspServers",
        field="lsp_servers",
        check=parse_lsp_servers,
        schema={"type": "object", "additionalProperties": {"type": "object"}},
        default={},
        description="Language servers in Claude Code's `.lsp.json` shape, whose diagnostics "
        "come back after each edit outside an editor (`agentls run`, ACP, batch, background "
        'tasks): `{"pyright": {"command": "pyright-langserver", "args": ["--stdio"], '
        '"extensionToLanguage": {".py": "python"}}}`, with `env`, `initializationOptions`, '
        "`settings`, `startupTimeout` and `shutdownTimeout` (milliseconds), `disabled`. "
        "Without it, pyright (else basedpyright), ruff, typescript-language-server, gopls, "
        "rust-analyzer and clangd serve when on PATH. User settings only.",
        user_only=True,
    ),
)


@dataclass(frozen=True, kw_only=True)
class EyesSettings(Part):
    ROWS: ClassVar[tuple[Setting, ...]] = ROWS

    lsp_servers: tuple[ServerDefinition, ...] = ()
