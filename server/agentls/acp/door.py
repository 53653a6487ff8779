"""`agentls acp`: its arguments and its start. A new option of the ACP door is one more
`add_argument` in `add_command`, read in `main`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

WAITING_ACP = (
    "agentls acp serves the Agent Client Protocol: it waits for an editor (Zed, JetBrains, ...) "
    'to speak it on stdin. To run one task here: agentls run "<task>". Ctrl-C leaves.'
)


def add_command(commands: Any) -> argparse.ArgumentParser:
    """`agentls acp`, among the `agentls` commands."""
    acp: argparse.ArgumentParser = commands.add_parser(
        "acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, agent-shell, ...)"
    )
    acp.add_argument(
        "--login",
        action="store_true",
        help="sign in from a terminal: asks for the provider and its API key and keeps the "
        "key in ~/.config/agentls/.env (what an ACP client's terminal sign-in runs)",
    )
    acp.set_defaults(door=main)
    return acp


def main(arguments: argparse.Namespace) -> int:
    if arguments.login:
        from .login import login

        return login()
    from ..serving.lifetime import exit_now, loading_front_end, start_serving

    start_serving(arguments.log_file)
    with loading_front_end():
        from .agent import serve

    if sys.stdin.isatty():
        print(WAITING_ACP, file=sys.stderr, flush=True)
    serve()
    exit_now(0)
