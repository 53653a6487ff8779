"""Cross-app access (the MCP enterprise-managed authorization extension, SEP-990): the user's
ID token from their company's identity provider is exchanged there for an ID-JAG (RFC 8693
token exchange), which the MCP server's authorization server takes for an access token (RFC
7523 jwt-bearer, the SDK's `IdentityAssertionOAuthProvider`).

The SDK's provider wants the authorization server's issuer as configuration: `oauth.issuer`
when the user names it; else it is read from the MCP server's protected-resource metadata at
the first 401, and from then on fixed for the session."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import httpx2
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
)
from mcp.shared._httpx_utils import RedirectAwareAuth

from .mcp_auth import SignInFailed, TokenFile

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


class CrossAppAccess(RedirectAwareAuth):
    requires_response_body = True

    def __init__(
        self,
        url: str,
        storage: TokenFile,
        oauth: Mapping[str, Any],
        read: Callable[[str, str], str],
    ) -> None:
        needs = ("clientId", "clientSecret", "idpTokenEndpoint", "idpClientId", "idTokenFile")
        for needed in needs:
            if not oauth.get(needed):
                raise SignInFailed(f"the cross_app_access grant needs oauth.{needed}")
        self.url = url
        self.storage = storage
        self.oauth = oauth
        self.read = read
        self.inner: IdentityAssertionOAuthProvider | None = None
        if oauth.get("issuer"):
            self.inner = self._provider(str(oauth["issuer"]))

    def _provider(self, issuer: str) -> IdentityAssertionOAuthProvider:
        oauth = self.oauth
        scopes = oauth.get("scopes")
        return IdentityAssertionOAuthProvider(
            self.url,
            self.storage,
            str(oauth["clientId"]),
            str(oauth["clientSecret"]),
            issuer,
            self._id_jag,
            scope=" ".join(scopes) if isinstance(scopes, list) else scopes or None,
            token_endpoint_auth_method="client_secret_basic",
        )

    async def _id_jag(self, audience: str, resource: str) -> str:
        """Leg one: the identity provider's token exchange (RFC 8693), the user's ID token
        for an ID-JAG naming the MCP server's authorization server and the resource."""
        oauth = self.oauth
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": self.read(str(oauth["idTokenFile"]), "ID token file"),
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": audience,
            "resource": resource,
            "client_id": str(oauth["idpClientId"]),
        }
        if oauth.get("idpClientSecret"):
            form["client_secret"] = str(oauth["idpClientSecret"])
        async with httpx2.AsyncClient(timeout=30) as client:
            answer = await client.post(str(oauth["idpTokenEndpoint"]), data=form)
        if answer.status_code != 200:
            raise SignInFailed(
                f"the identity provider's token exchange ({answer.status_code}): "
                f"{answer.text[:300]}"
            )
        token = answer.json().get("access_token")
        if not isinstance(token, str):
            raise SignInFailed("the identity provider's token exchange: no ID-JAG in its answer")
        return token

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.inner is None:
            response = yield request
            if response.status_code not in (401, 403):
                return
            issuer = None
            named = extract_resource_metadata_from_www_auth(response)
            for url in build_protected_resource_metadata_discovery_urls(named, self.url):
                found = await handle_protected_resource_response(
                    (yield create_oauth_metadata_request(url))
                )
                if found is not None and found.authorization_servers:
                    issuer = str(found.authorization_servers[0])
                    break
            if issuer is None:
                raise SignInFailed(
                    "finding the authorization server: the MCP server publishes no "
                    "protected-resource metadata; name it in oauth.issuer"
                )
            self.inner = self._provider(issuer)
        flow = self.inner.async_auth_flow(request)
        outgoing = await flow.__anext__()
        while True:
            response = yield outgoing
            try:
                outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
