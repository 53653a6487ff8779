"""The `agentls acp` command's own arguments (cheap to import: the parser is built at every
start) and what they run."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--login",
        action="store_true",
        help="sign in from a terminal: asks for the provider and its API key and keeps the "
        "key in ~/.config/agentls/.env (what an ACP client's terminal sign-in runs)",
    )


def login() -> int:
    from .login import login

    return login()
