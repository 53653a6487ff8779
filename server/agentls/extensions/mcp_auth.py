"""Signing in to HTTP MCP servers, as the MCP authorization spec says (OAuth 2.1), through the
mcp SDK's providers: they discover the protected-resource and authorization-server metadata
(with the older fallbacks), choose scopes, register agentls (or use a client ID metadata
document, or the configured client), run PKCE, send `resource`, refresh, and step up on a 403
`insufficient_scope` once per request. What agentls adds: where tokens are kept
(`TokenFile`), the loopback redirect and the browser (`SignIn`), the choice of grant from the
server's `"oauth"` entry, and words for a failure (`failure`).

Tokens are kept per server URL in the user's private state (0600 files in a 0700 folder,
never in the workspace), and never logged or given to the model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from ..disk.state import private_dir, state_base
from .mcp_user import current, open_in_browser

GRANTS = ("authorization_code", "client_credentials", "cross_app_access")
OAUTH_FIELDS = (
    "clientId",
    "clientSecret",
    "scopes",
    "callbackPort",
    "clientMetadataUrl",
    "grant",
    "privateKeyFile",
    "issuer",
    "idpTokenEndpoint",
    "idpClientId",
    "idpClientSecret",
    "idpIssuer",
    "idTokenFile",
)


class NeedsSignIn(Exception):
    """The server asks for a sign-in that nobody may start now (`agentls mcp list`)."""


class SignInFailed(Exception):
    """A step of the sign-in failed; the message says which and what to do."""


def check_oauth(name: str, value: Any) -> None:
    """Raises ValueError for an `"oauth"` entry agentls cannot use."""
    if not isinstance(value, Mapping):
        raise ValueError(f"mcpServers.{name}.oauth must be an object")
    unknown = sorted(set(value) - set(OAUTH_FIELDS))
    if unknown:
        raise ValueError(f"mcpServers.{name}.oauth: unknown field {unknown[0]!r}")
    if value.get("grant", "authorization_code") not in GRANTS:
        raise ValueError(f"mcpServers.{name}.oauth.grant: one of {', '.join(GRANTS)}")
    port = value.get("callbackPort")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
        raise ValueError(f"mcpServers.{name}.oauth.callbackPort must be a port number")
    scopes = value.get("scopes")
    if scopes is not None and not isinstance(scopes, (str, list)):
        raise ValueError(f"mcpServers.{name}.oauth.scopes: a string or a list of strings")


# Where tokens are kept.


def tokens_folder() -> Path:
    return state_base() / "mcp-auth"


class TokenFile:
    """The SDK's `TokenStorage` for one server URL: its tokens (and when they expire), the
    client agentls registered as, and the redirect port that registration named."""

    def __init__(self, url: str) -> None:
        self.url = url
        digest = hashlib.sha256(url.encode()).hexdigest()[:32]
        self.path = tokens_folder() / f"{digest}.json"
        self.port: int | None = None
        """The redirect's port the registration names (kept with it, for the next sign-in)."""

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    def _save(self, data: dict[str, Any]) -> None:
        folder = private_dir(tokens_folder())
        temporary = folder / f".{self.path.name}.{os.getpid()}.tmp"
        # Created 0600 from the start: no moment where another user could read it.
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump({**data, "url": self.url}, stream)
        os.replace(temporary, self.path)

    def update(self, **values: Any) -> None:
        self._save({**self.load(), **values})

    def remove(self) -> bool:
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def expires_at(self) -> float | None:
        value = self.load().get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    # mcp.client.auth.TokenStorage

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self.load().get("tokens")
        return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires = time.time() + tokens.expires_in if tokens.expires_in else None
        self.update(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        client = self.load().get("client")
        if not isinstance(client, dict):
            return None
        return OAuthClientInformationFull.model_validate(client)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        kept = {"port": self.port} if self.port else {}
        self.update(client=client_info.model_dump(mode="json", exclude_none=True), **kept)


def signed_in(url: str) -> bool:
    return "tokens" in TokenFile(url).load()


def logout(url: str) -> bool:
    """Forget the tokens and the registration kept for `url`; whether it was signed in."""
    was = signed_in(url)
    TokenFile(url).remove()
    return was


# The loopback redirect and the browser.


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class SignIn:
    """One authorization-code sign-in: the URL shown and opened, the redirect awaited on
    127.0.0.1 for at most `timeout` seconds."""

    def __init__(
        self,
        server: str,
        port: int,
        timeout: float,
        interactive: bool,
        begun: Callable[[], None] = lambda: None,
        workspace: Path | None = None,
    ) -> None:
        self.server = server
        self.begun = begun
        self.workspace = workspace
        """The folder the server serves: no browser is found in it (`open_in_browser`)."""
        self.port = port
        self.timeout = timeout
        self.interactive = interactive
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self._listener: asyncio.Server | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def redirect(self, url: str) -> None:
        """The SDK's redirect handler: listen first, so a quick browser finds the port."""
        if not self.interactive:
            raise NeedsSignIn(f"run `agentls mcp login {self.server}`")
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._listener = await asyncio.start_server(self._answer, "127.0.0.1", self.port)
        except OSError as error:
            raise SignInFailed(
                f"listening for the sign-in's redirect on 127.0.0.1:{self.port}: {error} "
                "(set another oauth.callbackPort)"
            ) from None
        self.begun()
        current().open_url(self.server, url, f"sign in to the MCP server {self.server}")
        open_in_browser(url, self.workspace)

    async def callback(self) -> AuthorizationCodeResult:
        """The SDK's callback handler: the code the browser brought back."""
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), self.timeout)
        except asyncio.TimeoutError:
            raise SignInFailed(
                f"waiting for the browser: no sign-in within {self.timeout:g} s "
                f"(the mcpAuthTimeout setting); open the URL shown, or run "
                f"`agentls mcp login {self.server}`"
            ) from None
        finally:
            if self._listener is not None:
                self._listener.close()
                self._listener = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
        except (asyncio.TimeoutError, ConnectionError):
            writer.close()
            return
        parts = request.split()
        target = urlsplit(parts[1]) if len(parts) >= 2 else urlsplit("/")
        query = {key: values[0] for key, values in parse_qs(target.query).items()}
        found = target.path == "/callback" and ("code" in query or "error" in query)
        if found and self._result is not None and not self._result.done():
            if "code" in query:
                self._result.set_result(
                    AuthorizationCodeResult(
                        code=query["code"], state=query.get("state"), iss=query.get("iss")
                    )
                )
            else:
                why = query.get("error_description") or query["error"]
                self._result.set_exception(
                    SignInFailed(f"the authorization server refused the sign-in: {why}")
                )
        page = (
            f"Signed in to the MCP server {self.server}: you can close this tab."
            if found and "code" in query
            else "agentls: this is not a sign-in redirect, or the sign-in failed."
        ).encode()
        status = "200 OK" if found else "404 Not Found"
        head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        writer.write(f"{head}Content-Length: {len(page)}\r\nConnection: close\r\n\r\n".encode())
        writer.write(page)
        try:
            await writer.drain()
        finally:
            writer.close()


# The providers.


class _KeptExpiry:
    """The SDK forgets when stored tokens expire (it learns it only from a fresh token
    response): taken from the token file, so an expired token is refreshed at the next
    request, not sent and refused first."""

    context: Any

    async def _initialize(self) -> None:
        await super()._initialize()  # type: ignore[misc]
        storage = self.context.storage
        if isinstance(storage, TokenFile) and self.context.current_tokens is not None:
            self.context.token_expiry_time = storage.expires_at()


class _UserProvider(_KeptExpiry, OAuthClientProvider):
    """The authorization-code provider, with the client the user configured (if any) and
    the scopes they named added to those the server asks for."""

    def __init__(
        self, *args: Any, client: OAuthClientInformationFull | None, scopes: str | None, **kw: Any
    ) -> None:
        super().__init__(*args, **kw)
        self._client = client
        self._scopes = scopes

    async def _initialize(self) -> None:
        await super()._initialize()
        if self._client is not None:
            self.context.client_info = self._client

    async def _perform_authorization(self) -> httpx2.Request:
        if self._scopes:
            chosen = (self.context.client_metadata.scope or "").split()
            extra = [s for s in self._scopes.split() if s not in chosen]
            self.context.client_metadata.scope = " ".join([*chosen, *extra])
        return await super()._perform_authorization()


def _scopes(oauth: Mapping[str, Any]) -> str | None:
    scopes = oauth.get("scopes")
    if isinstance(scopes, list):
        return " ".join(str(s) for s in scopes) or None
    return str(scopes) if scopes else None


def _read(path: str, what: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8").strip()
    except OSError as error:
        raise SignInFailed(f"reading the {what} {path}: {error.strerror}") from None


def provider_for(
    server: str,
    url: str,
    oauth: Mapping[str, str | int | list[str]],
    timeout: float,
    interactive: bool,
    begun: Callable[[], None] = lambda: None,
    workspace: Path | None = None,
) -> httpx2.Auth:
    """The SDK provider for `url` as the server's (expanded) `"oauth"` entry asks; `begun`
    is called when a sign-in starts (the browser's wait is longer than a start-up's);
    `workspace`: the folder the server serves, where no browser is looked for."""
    storage = TokenFile(url)
    grant = oauth.get("grant", "authorization_code")
    client_id = str(oauth.get("clientId", "")) or None
    secret = str(oauth.get("clientSecret", "")) or None
    issuer = str(oauth.get("issuer", "")) or None
    if grant == "client_credentials":
        return _client_credentials(url, storage, client_id, secret, oauth, issuer)
    if grant == "cross_app_access":
        from .mcp_cross_app import CrossAppAccess

        return CrossAppAccess(url, storage, oauth, _read)
    port = int(oauth.get("callbackPort") or storage.load().get("port") or free_port())  # type: ignore[arg-type]

    storage.port = port  # kept with the registration, which names it
    sign_in = SignIn(server, port, timeout, interactive, begun, workspace)
    method: Literal["client_secret_basic", "none"] = "client_secret_basic" if secret else "none"
    metadata = OAuthClientMetadata(
        client_name="agentls",
        redirect_uris=[sign_in.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=method,
    )
    configured = None
    if client_id:
        configured = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=secret,
            redirect_uris=[sign_in.redirect_uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method=method,
        )
    return _UserProvider(
        url,
        metadata,
        storage,
        redirect_handler=sign_in.redirect,
        callback_handler=sign_in.callback,
        client_metadata_url=str(oauth.get("clientMetadataUrl", "")) or None,
        client=configured,
        scopes=_scopes(oauth),
    )


def _client_credentials(
    url: str,
    storage: TokenFile,
    client_id: str | None,
    secret: str | None,
    oauth: Mapping[str, Any],
    issuer: str | None,
) -> httpx2.Auth:
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    if not client_id:
        raise SignInFailed("the client_credentials grant needs oauth.clientId")
    key_file = str(oauth.get("privateKeyFile", ""))

    class Secret(_KeptExpiry, ClientCredentialsOAuthProvider):
        pass

    class KeyJwt(_KeptExpiry, PrivateKeyJWTOAuthProvider):
        pass

    # Without an issuer the SDK warns (it will be required in its 3.0): the user's entry may
    # name one; without, the authorization server the MCP server names is used.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if key_file:
            key = _read(key_file, "private key")
            signed = SignedJWTParameters(
                issuer=client_id, subject=client_id, signing_key=key, signing_algorithm=_alg(key)
            )
            return KeyJwt(
                url,
                storage,
                client_id,
                signed.create_assertion_provider(),
                scope=_scopes(oauth),
                issuer=issuer,
            )
        if not secret:
            raise SignInFailed(
                "the client_credentials grant needs oauth.clientSecret or oauth.privateKeyFile"
            )
        return Secret(url, storage, client_id, secret, scope=_scopes(oauth), issuer=issuer)


def _alg(pem: str) -> str:
    """The signing algorithm a private key calls for: ES256/384/512 for EC keys by curve,
    RS256 for RSA, EdDSA for Ed25519."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem.encode(), password=None)
    except ValueError as error:
        raise SignInFailed(f"reading the private key: {error}") from None
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {256: "ES256", 384: "ES384", 521: "ES512"}.get(key.curve.key_size, "ES256")
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    return "RS256"


# A failure, in words.

_STEPS = {
    "OAuthRegistrationError": "registering agentls with the authorization server",
    "OAuthTokenError": "getting a token",
    "OAuthFlowError": "finding the authorization server",
}


def failure(server: str, error: BaseException) -> str | None:
    """What a sign-in failure says to the user: the server, the step, what to do; None for
    an error that is no sign-in's."""
    kind = type(error).__name__
    if isinstance(error, SignInFailed):
        return f"sign-in to {server} failed at {error}"
    if kind in _STEPS:
        return (
            f"sign-in to {server} failed at {_STEPS[kind]}: {error}; check the server's "
            f'"oauth" entry, then `agentls mcp login {server}`'
        )
    return None


def expanded(oauth: Mapping[str, Any], expand: Callable[[str], str]) -> dict[str, Any]:
    """The entry with `${VAR}` expanded in its strings (as in `headers`)."""
    return {
        key: expand(value)
        if isinstance(value, str)
        else [expand(v) for v in value]
        if isinstance(value, list)
        else value
        for key, value in oauth.items()
    }
