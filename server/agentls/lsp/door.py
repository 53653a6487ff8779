"""The LSP door's command line: `agentls` with no command serves LSP on stdio, or on TCP with
`--tcp`. Its options are the `agentls` command's own (`--tcp`, `--host`, `--port`,
`--log-file`)."""

from __future__ import annotations

import argparse
import sys

WAITING = (
    "agentls is a language server: it waits for an editor to speak LSP on stdin. "
    'To run one task here: agentls run "<task>". Ctrl-C leaves.'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `agentls` itself, which serves LSP."""
    parser.add_argument("--tcp", action="store_true", help="serve on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    parser.add_argument("--log-file", help="write the server's log to this file")


def main(arguments: argparse.Namespace) -> int:
    from ..serving.lifetime import exit_now, loading_front_end, start_serving

    start_serving(arguments.log_file)
    if arguments.tcp:
        return serve_tcp(arguments.host, arguments.port)
    with loading_front_end():
        from .server import make_server

        server = make_server()
    if sys.stdin.isatty():
        print(WAITING, file=sys.stderr, flush=True)
    server.start_io()
    # The connection is closed and the tasks cancelled. Python's own teardown of the SDK's
    # modules would keep an editor waiting seconds more for the process to end.
    exit_now(0)


def serve_tcp(host: str, port: int) -> int:
    import asyncio

    from ..serving.lifetime import loading_front_end

    with loading_front_end():
        from .tcp import can_check_peers, serve

    if not can_check_peers():
        print(
            "agentls: --tcp needs Linux's /proc/net/tcp to check that a connection is yours; "
            "use stdio (the default) on this system",
            file=sys.stderr,
        )
        return 2
    try:
        asyncio.run(serve(host, port))
    except OSError as error:
        print(f"agentls: cannot serve on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0
