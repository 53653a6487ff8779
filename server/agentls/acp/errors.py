"""JSON-RPC errors whose `message` is what went wrong.

The SDK's helpers put a fixed "Internal error" or "Invalid params" in `message` and the words
in `data`, which clients such as CodeCompanion never show: the user saw "Internal error"
where agentls had said "No Anthropic API key is set". Here `message` carries the words and
`data` repeats them, beside any field a client may read.
"""

from __future__ import annotations

from typing import Any

import acp

AUTH_REQUIRED = -32000
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def _error(code: int, message: str, data: dict[str, Any]) -> acp.RequestError:
    return acp.RequestError(code, message, {"message": message, **data})


def invalid_request(message: str, **data: Any) -> acp.RequestError:
    """The request cannot be served now (a prompt is running, say)."""
    return _error(INVALID_REQUEST, message, data)


def invalid_params(message: str, **data: Any) -> acp.RequestError:
    """A parameter is wrong: `data` names it."""
    return _error(INVALID_PARAMS, message, data)


def failed(message: str, **data: Any) -> acp.RequestError:
    """The request was right but could not be done (no key, the API refused, ...)."""
    return _error(INTERNAL_ERROR, message, data)


def auth_required(message: str) -> acp.RequestError:
    """The provider's key is missing: the client offers the user its sign-in methods."""
    return _error(AUTH_REQUIRED, message, {})
