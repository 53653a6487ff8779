"""A session's config options (ACP `configOptions`): the `model` picker (the model in use,
then the user's `models` setting) and the `mode` picker (the same modes as `modes`)."""

from __future__ import annotations

from typing import Final

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from ..config.environment import user_client
from ..interfaces import ModelError
from ..models.providers import model_id, profile_of
from ..settings.assembly import Settings
from . import errors

MODEL: Final = "model"
MODE: Final = "mode"
UNSET = "unset"
"""The model value when no model is named for a provider without a default."""


def configured_model(settings: Settings) -> str:
    """The model a task would use without a choice in the session."""
    try:
        env = user_client()
        return model_id(profile_of(settings.provider, env), settings.model, env)
    except ModelError:
        return settings.models[0] if settings.models else UNSET


def model_option(current: str, settings: Settings) -> SessionConfigOptionSelect:
    values = list(dict.fromkeys([current, configured_model(settings), *settings.models]))
    return SessionConfigOptionSelect(
        id=MODEL,
        name="Model",
        category=MODEL,
        type="select",
        current_value=current,
        options=[
            SessionConfigSelectOption(
                value=value, name="(no model set)" if value == UNSET else value
            )
            for value in values
        ],
    )


def mode_option(current: str, modes: dict[str, str]) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        id=MODE,
        name="Mode",
        category=MODE,
        type="select",
        current_value=current,
        options=[
            SessionConfigSelectOption(value=mode, name=mode, description=words)
            for mode, words in modes.items()
        ],
    )


def checked_model(value: str, settings: Settings) -> str:
    """`value` when the picker offers it; raises invalid_params otherwise."""
    offered = {configured_model(settings), *settings.models} - {UNSET}
    if value not in offered:
        raise errors.invalid_params(
            f"model {value!r} is not offered: add it to the agentls models setting",
            configId=MODEL,
            value=value,
        )
    return value
