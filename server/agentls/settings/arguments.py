"""Command-line values that are settings too (`--max-steps`, `--provider`), held to the
setting's own range, so that a door's flag and the setting cannot disagree. Light to import:
each door's parser uses them, and the settings load only when a value is checked."""

from __future__ import annotations

import argparse


def max_steps(text: str) -> int:
    """`--max-steps`, held to the range of the maxSteps setting."""
    from .assembly import checked

    try:
        steps: int = checked("maxSteps", int(text) if text.lstrip("-").isdigit() else text)
        return steps
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def provider(text: str) -> str:
    """`--provider`, one of the agentls.provider setting's values."""
    from .assembly import checked

    try:
        return str(checked("provider", text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
