"""A newcomer's first steps: the README's test command needs nothing a setup script
downloads, and the Neovim help says the same install line as the README."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = ("tests/test_first_use.py", "tests/test_vscode_extension.py")


def test_the_readme_test_command_does_not_select_the_vscode_tier() -> None:
    listed = subprocess.run(
        # The README's command with the collection narrowed to two files, for speed.
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", *FILES],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "tests/test_first_use.py::" in listed
    assert "test_vscode_extension.py" not in listed


def test_the_neovim_help_gives_the_readme_install_line() -> None:
    readme = (REPO / "README.md").read_text()
    install = re.search(r"^(pip install \S+)", readme, re.MULTILINE)
    assert install is not None
    help_text = (REPO / "editor-clients" / "nvim" / "doc" / "agentls.txt").read_text()
    assert f"`{install.group(1)}`" in help_text
    assert "pip install agentls" not in help_text  # not on PyPI
