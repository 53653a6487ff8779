"""The models: one adapter per wire format behind the loop's `Model` interface, the
Messages API through the anthropic SDK (`anthropic.py`: streaming, retries, prompt caching)
and Chat Completions through the openai SDK (`chat.py`); the provider profiles, the one
place a key and its endpoint are chosen (`providers.py`); prices (`costs.py`); and the
model's settings (`settings.py`). Nothing here knows a door or a tool."""
