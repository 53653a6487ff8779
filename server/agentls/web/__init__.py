"""The web, for web_fetch: which addresses may be reached (`guard.py`), fetching a page
from the server process through that guard only (`fetch.py`), and what a page becomes for
the model (`pages.py`: markdown, capped, cached, marked as untrusted data).

Its settings are its own (`settings.py`). It imports nothing of agentls but `images`,
`redaction`, `interfaces` and `config/settings` (the rows' machinery); the tool in
`tools/web_fetch.py` adds the permission decision.
"""
