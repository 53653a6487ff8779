"""A newcomer's first steps: the Neovim help says the same install line as the README."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _first_block(text: str) -> str:
    block = re.search(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert block is not None
    return block.group(1)


def test_the_quickstart_installs_where_a_stock_debian_python_allows() -> None:
    """Debian's and Ubuntu's own pip refuse `pip install .` (externally-managed-environment):
    the README's first block installs with pipx (uv named beside it), never a bare pip."""
    readme = (REPO / "README.md").read_text()
    first = _first_block(readme)
    assert re.search(r"^pipx install \.", first, re.MULTILINE)
    assert "uv tool install ." in first
    assert not re.search(r"^(sudo )?pip3? install", first, re.MULTILINE)
    # The test command makes its own environment too.
    assert 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]"' in readme


def test_the_neovim_help_gives_the_readme_install_line() -> None:
    readme = (REPO / "README.md").read_text()
    install = re.search(r"^(pipx install \S+)", _first_block(readme), re.MULTILINE)
    assert install is not None
    help_text = (REPO / "editor-clients" / "nvim" / "doc" / "agentls.txt").read_text()
    assert f"`{install.group(1)}`" in help_text
    assert "pip install agentls" not in help_text  # not on PyPI


def test_the_codecompanion_snippet_is_an_adapter_of_its_own() -> None:
    """Extending `gemini_cli` kept its other commands (`gemini --yolo`) and its auth method:
    the snippet (docs/acp.md) defines an ACP adapter whose only command is `agentls acp`."""
    acp = (REPO / "docs" / "acp.md").read_text()
    start = acp.index("Neovim with [CodeCompanion]")
    snippet = re.search(r"```lua\n(.*?)```", acp[start:], re.DOTALL)
    assert snippet is not None
    lua = snippet.group(1)
    assert "extend(" not in lua and "gemini" not in lua
    assert 'type = "acp"' in lua
    assert 'commands = { default = { "agentls", "acp" } }' in lua
    assert 'interactions = { chat = { adapter = "agentls" } }' in lua
