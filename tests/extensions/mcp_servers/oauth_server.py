"""An HTTP MCP server that wants a sign-in, for the tests: `python oauth_server.py PORT LOG`.

The SDK's `MCPServer` with its own authorization server (metadata, dynamic registration,
authorize, token), answering each authorization at once (as a browser whose user is signed in
would); access tokens live 2 seconds, so a second task finds its token expired and refreshes.
Each token endpoint's use is appended to LOG (`code`, `refresh`), never the tokens."""

from __future__ import annotations

import secrets
import sys
import time
from typing import Any

from mcp.server import MCPServer
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[1])
LOG = sys.argv[2]
BASE = f"http://127.0.0.1:{PORT}"
LIFETIME = 2


def logged(event: str) -> None:
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(event + "\n")


class Provider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: Any, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["read"],
            expires_at=time.time() + 300,
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _tokens(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + LIFETIME
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=LIFETIME,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(self, client: Any, code: AuthorizationCode) -> OAuthToken:
        del self.codes[code.code]
        logged("code")
        return self._tokens(code.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: Any, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        logged("refresh")
        return self._tokens(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at or 0) < time.time():
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)


server = MCPServer(
    "oauth",
    auth_server_provider=Provider(),
    auth=AuthSettings(
        issuer_url=BASE,  # type: ignore[arg-type]
        resource_server_url=f"{BASE}/mcp",  # type: ignore[arg-type]
        client_registration_options=ClientRegistrationOptions(enabled=True),
        required_scopes=["read"],
        validate_token_resource=True,
    ),
)


@server.tool(description="Say who is signed in.")
def whoami() -> str:
    return "signed in"


server.run("streamable-http", host="127.0.0.1", port=PORT)
