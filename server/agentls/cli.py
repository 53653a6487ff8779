"""The `agentls` command: serve LSP (stdio or TCP), or run one task in the terminal."""

from __future__ import annotations

import argparse
import logging
import sys

from . import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentls", description="A coding agent served to editors over LSP."
    )
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    parser.add_argument("--tcp", action="store_true", help="serve on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    parser.add_argument("--log-file", help="write the server's log to this file")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", help="run one task in the current directory")
    run.add_argument("task", help="what the agent should do")
    run.add_argument("--yes", action="store_true", help="apply every edit and run every command")
    run.add_argument("--model", help="model id (default: AGENTLS_MODEL or a current Sonnet)")
    run.add_argument("--max-steps", type=int, help="stop after this many model turns")
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    if arguments.command == "run":
        from .terminal import run_in_terminal

        return run_in_terminal(arguments.task, arguments.yes, arguments.model, arguments.max_steps)
    # Logs go to a file or stderr, never stdout: stdout is the LSP channel.
    logging.basicConfig(
        filename=arguments.log_file, level=logging.INFO if arguments.log_file else logging.WARNING
    )
    from .lifetime import exit_now, kill_shells_on_signals
    from .lsp.server import server

    kill_shells_on_signals()
    if arguments.tcp:
        server.start_tcp(arguments.host, arguments.port)
    else:
        server.start_io()
    # The connection is closed and the tasks cancelled. Python's own teardown of the SDK's
    # modules would keep an editor waiting seconds more for the process to end.
    exit_now(0)


if __name__ == "__main__":
    sys.exit(main())
