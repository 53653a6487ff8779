"""A newcomer's first steps: the Neovim help says the same install line as the README."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_neovim_help_gives_the_readme_install_line() -> None:
    readme = (REPO / "README.md").read_text()
    install = re.search(r"^(pip install \S+)", readme, re.MULTILINE)
    assert install is not None
    help_text = (REPO / "editor-clients" / "nvim" / "doc" / "agentls.txt").read_text()
    assert f"`{install.group(1)}`" in help_text
    assert "pip install agentls" not in help_text  # not on PyPI
