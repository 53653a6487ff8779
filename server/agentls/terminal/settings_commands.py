"""`agentls check-settings` and `agentls check-model`: the settings as the server would read
them, and the model they would choose, said in the terminal."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ..config import environment
from ..interfaces import ModelError
from ..models import capabilities, providers
from ..settings.assembly import parse


def check_settings(raw: str) -> int:
    """Print each problem the server would warn about; exit status 1 when there is one."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        print(f"agentls settings are not JSON: {error}")
        return 1
    settings, problems = parse(value)
    for problem in problems:
        print(problem)
    profile = providers.PROFILES.get(settings.provider or "")
    if settings.web_search and profile is not None and not profile.web_search:
        print(f"note: {profile.no_web_search}")  # a fact of the provider, not a problem
    if not problems:
        print("agentls settings are valid")
    return 1 if problems else 0


def check_model(raw: str) -> int:
    """Print the model and endpoint a task would use (never the key), or why there is none;
    exit status 1 then; and what a local server says will not work (tools its chat template
    drops). The workspace does not matter: only the user's sources configure it."""
    try:
        settings, _ = parse(json.loads(raw))
    except json.JSONDecodeError as error:
        print(f"agentls settings are not JSON: {error}")
        return 1
    env = environment.load(Path.cwd()).client
    try:
        endpoint = providers.endpoint(settings.provider, settings.base_url, env)
        model = providers.model_id(endpoint.profile, settings.model, env)
    except ModelError as error:
        print(f"{error} {error.hint}")
        return 1
    print(providers.describe(endpoint, model))
    if settings.web_search:
        searches = endpoint.profile.web_search
        print("web search: Anthropic's web_search" if searches else endpoint.profile.no_web_search)
    window = settings.context_window or providers.context_window(model, endpoint.profile.wire)
    try:
        for warning in asyncio.run(capabilities.warnings(endpoint, model, window)):
            print(f"warning: {warning}")
    except capabilities.NotAsked as why:
        print(f"Could not ask {endpoint.shown_url} what it supports ({why}).")
    return 0
