"""Signing in over ACP: the methods `initialize` offers, `authenticate`, `logout`.

agentls holds no account: "signed in" means the provider's key is found, in the environment
or in the user's config `.env`. The agent method (`agentls-key`) checks that; the terminal
method (`agentls-login`) has the client run `agentls acp --login` (`login.py`), which writes
the key there; `logout` removes it from there (the process environment is the user's own).
"""

from __future__ import annotations

from acp.schema import AuthMethodAgent, ClientCapabilities, EnvVarAuthMethod, TerminalAuthMethod

from ..config import keys
from ..config.environment import user_client
from ..interfaces import ModelError
from ..models.providers import Profile, profile_of
from ..settings.user import load as load_user_settings
from . import errors

KEY_METHOD = "agentls-key"
LOGIN_METHOD = "agentls-login"
LOGIN_ARGS = ["--login"]


def terminal_auth(capabilities: ClientCapabilities | None) -> bool:
    """Whether the client can run the agent in a terminal for a login: the stable
    `auth.terminal`, or the `_meta["terminal-auth"]` that Zed and the registry's CI send."""
    if capabilities is None:
        return False
    if capabilities.auth is not None and capabilities.auth.terminal:
        return True
    meta = capabilities.field_meta or {}
    return meta.get("terminal-auth") is True


Method = EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent


def methods(capabilities: ClientCapabilities | None) -> list[Method]:
    """Never empty; the terminal method only for a client that declared it can run one."""
    offered: list[Method] = [
        AuthMethodAgent(
            id=KEY_METHOD,
            name="API key",
            description="Use the provider's API key from the environment or "
            "~/.config/agentls/.env.",
        )
    ]
    if terminal_auth(capabilities):
        offered.append(
            TerminalAuthMethod(
                id=LOGIN_METHOD,
                name="Sign in with an API key",
                description="Asks for the provider and its key, and keeps the key in "
                "~/.config/agentls/.env (readable by you only).",
                type="terminal",
                args=LOGIN_ARGS,
            )
        )
    return offered


def _profile() -> Profile:
    settings, _ = load_user_settings()
    try:
        return profile_of(settings.provider, user_client())
    except ModelError as error:
        raise errors.invalid_params(f"{error} {error.hint}") from None


def missing_key() -> str | None:
    """What to do when the provider needs a key and none is found; None when it is found
    (or the provider, a local server, needs none)."""
    profile = _profile()
    env = user_client()
    if not profile.keys or any(env.get(variable) for variable, _ in profile.keys):
        return None
    return f"No {profile.title} API key is set. {profile.key_hint} Or run: agentls acp --login"


def authenticate(method_id: str) -> None:
    """Raises auth_required when the key is missing, invalid_params for another method."""
    if method_id != KEY_METHOD:
        raise errors.invalid_params(
            f"authenticate takes {KEY_METHOD}; {LOGIN_METHOD} runs in a terminal",
            methodId=method_id,
        )
    hint = missing_key()
    if hint is not None:
        raise errors.auth_required(hint)


def logout() -> None:
    """Remove the provider's key lines from the user's config `.env`."""
    profile = _profile()
    try:
        keys.remove_keys(tuple(variable for variable, _ in profile.keys))
    except OSError as error:
        raise errors.failed(f"could not sign out: {error}") from None
