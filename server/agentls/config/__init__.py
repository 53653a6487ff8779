"""Configuration: the settings object, each setting defined once (`settings.py`); the
user's own `settings.json`, for the terminal and ACP (`user_settings.py`); and the
environment and `.env` files, from which only the user's sources configure anything
(`environment.py`)."""
