"""The `agentls` command: it only dispatches. Each door owns its arguments and its start:
with no command, the LSP server (`lsp/door.py`); `acp` (`acp/door.py`); `batch`
(`batch/door.py`); `run` and the terminal's other commands (`terminal/door.py`). A door's
parser names the function that runs it (`door`); the doors' modules import what they run
only when it runs, so that serving LSP loads nothing of the others."""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .acp import door as acp
from .batch import door as batch
from .lsp import door as lsp
from .terminal import door as terminal


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentls", description="A coding agent served to editors over LSP."
    )
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    lsp.add_arguments(parser)
    parser.set_defaults(door=lsp.main)
    commands = parser.add_subparsers(dest="command")
    terminal.add_run(commands)
    acp.add_command(commands)
    batch.add_command(commands)
    terminal.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    status: int = arguments.door(arguments)
    return status


if __name__ == "__main__":
    sys.exit(main())
