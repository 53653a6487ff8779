"""Configuration: the settings' machinery, each setting a row its part writes and a table that
reads them (`settings.py`; the parts' rows are assembled in `agentls/settings/`); the user's
own `settings.json`, read for the terminal and ACP (`user_settings.py`); a repository's own
files, read before anything in them is approved (`project_settings.py`); and the environment
and `.env` files, from which only the user's sources configure anything (`environment.py`).

It parses no other part's shapes, and imports none of them (pyproject.toml)."""
