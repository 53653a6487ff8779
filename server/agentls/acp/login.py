"""`agentls acp --login`: the terminal sign-in an ACP client runs (the `agentls-login`
method's args appended to the agent's command). It asks for the provider and its key (not
echoed) and keeps the key in the user's config `.env`; the exit status is the answer."""

from __future__ import annotations

import getpass
import sys
from typing import TextIO

from ..config import keys
from ..models.providers import DEFAULT_PROVIDER, PROFILES, Profile

KEYED = {name: profile for name, profile in PROFILES.items() if profile.keys}
"""The providers that take a key (a local server needs no sign-in)."""


def _provider(ask: TextIO, answer: TextIO) -> Profile | None:
    names = ", ".join(KEYED)
    while True:
        ask.write(f"Provider ({names}) [{DEFAULT_PROVIDER}]: ")
        ask.flush()
        line = answer.readline()
        if not line:  # end of input: no sign-in
            return None
        name = line.strip() or DEFAULT_PROVIDER
        if name in KEYED:
            return KEYED[name]
        ask.write(f"No provider {name!r} takes a key here.\n")


def login(ask: TextIO = sys.stderr, answer: TextIO = sys.stdin) -> int:
    """0 once the key is kept; 1 when none was given (nothing is written)."""
    profile = _provider(ask, answer)
    if profile is None:
        ask.write("\nNot signed in.\n")
        return 1
    variable = profile.keys[0][0]
    try:
        key = getpass.getpass(f"{profile.title} API key ({variable}, not shown): ", stream=ask)
    except EOFError:
        key = ""
    key = key.strip()
    if not key:
        ask.write("No key given: not signed in.\n")
        return 1
    try:
        path = keys.set_key(variable, key)
    except (OSError, ValueError) as error:
        ask.write(f"Not signed in: {error}\n")
        return 1
    ask.write(f"Signed in: {variable} is kept in {path} (readable by you only).\n")
    return 0
