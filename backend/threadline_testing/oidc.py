"""A local OpenID Connect provider for the tests: a discovery document and a key set (JWKS) over real HTTP,
RS256 and ES256 keys, rotation, and tokens signed as a provider signs them (PyJWT). It counts how often its
keys are fetched, so a test can see that verification does not fetch them per request.

For the page it signs people in as a provider does for a browser app: the authorization-code flow with PKCE
(S256) behind a small login form (any user name signs in), a token endpoint that also renews with refresh
tokens, and sign-out; with CORS, since the page calls it from its own origin."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import urlencode

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from litestar import Litestar, MediaType, Request, Response, get, post
from litestar.config.cors import CORSConfig
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect

from threadline_testing.standins import serve_in_thread

AUDIENCE = "https://api.threadline.test"


@dataclass
class Key:
    kid: str
    algorithm: str
    private: Any

    def public_jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.algorithm)
        jwk: dict[str, Any] = json.loads(algorithm.to_jwk(self.private.public_key()))
        return jwk | {"kid": self.kid, "alg": self.algorithm, "use": "sig"}


def new_key(algorithm: str = "RS256") -> Key:
    private = (
        rsa.generate_private_key(65537, 2048)
        if algorithm.startswith(("RS", "PS"))
        else ec.generate_private_key(ec.SECP256R1())
    )
    return Key(uuid.uuid4().hex[:12], algorithm, private)


@dataclass
class Grant:
    """What a code or a refresh token stands for."""

    subject: str
    client_id: str
    scope: str
    nonce: str | None = None
    redirect_uri: str = ""
    challenge: str = ""


@dataclass
class Provider:
    issuer: str = ""
    keys: list[Key] = field(default_factory=lambda: [new_key("RS256"), new_key("ES256")])
    key_fetches: int = 0
    server: Any = None
    access_lifetime: float = 300  # seconds an access token issued to the page lasts
    codes: dict[str, Grant] = field(default_factory=dict)
    refresh_tokens: dict[str, Grant] = field(default_factory=dict)
    grants: list[str] = field(default_factory=list)  # each token request's grant type, in order

    def token(self, subject: str, *, key: Key | None = None, lifetime: float = 300, **claims: Any) -> str:
        """A token as the provider issues it for `subject`; `claims` override or add any claim."""
        key = key or self.keys[0]
        now = time.time()
        payload = {"iss": self.issuer, "sub": subject, "aud": AUDIENCE, "iat": now, "exp": now + lifetime} | claims
        return jwt.encode(payload, key.private, algorithm=key.algorithm, headers={"kid": key.kid})

    def rotate(self) -> Key:
        """A new signing key, published beside the old ones (as providers roll keys over)."""
        key = new_key("RS256")
        self.keys.append(key)
        return key

    def stop(self) -> None:
        self.server.should_exit = True

    def tokens(self, grant: Grant) -> dict[str, Any]:
        """A token response: an access token for the API, an ID token for the page, a new refresh token."""
        refresh = secrets.token_urlsafe(24)
        self.refresh_tokens[refresh] = grant
        profile = {"name": grant.subject.title(), "email": f"{grant.subject}@example.test"}
        identity = {"aud": grant.client_id, **profile} | ({"nonce": grant.nonce} if grant.nonce else {})
        return {
            "access_token": self.token(grant.subject, lifetime=self.access_lifetime),
            "id_token": self.token(grant.subject, lifetime=self.access_lifetime, **identity),
            "refresh_token": refresh,
            "token_type": "Bearer",
            "expires_in": int(self.access_lifetime),
            "scope": grant.scope,
        }


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


LOGIN_FORM = """<!doctype html><title>Sign in · stand-in provider</title>
<form method="post" action="/authorize">{hidden}
<label>User name <input name="username" autofocus></label> <button>Sign in</button></form>"""
Form = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]


def _error(description: str) -> Response[dict[str, str]]:
    return Response({"error": "invalid_grant", "error_description": description}, status_code=400)


def start() -> Provider:
    provider = Provider()

    @get("/.well-known/openid-configuration", sync_to_thread=False)
    def discovery() -> dict[str, Any]:
        return {
            "issuer": provider.issuer,
            "jwks_uri": f"{provider.issuer}/jwks",
            "authorization_endpoint": f"{provider.issuer}/authorize",
            "token_endpoint": f"{provider.issuer}/token",
            "end_session_endpoint": f"{provider.issuer}/logout",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
        }

    @get("/authorize", sync_to_thread=False, media_type=MediaType.HTML)
    def login_form(request: Request[Any, Any, Any]) -> str:
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">'
            for name, value in request.query_params.items()
        )
        return LOGIN_FORM.format(hidden=hidden)

    @post("/authorize", sync_to_thread=False, status_code=302)
    def authorize(data: Form) -> Redirect:
        if data.get("response_type") != "code" or data.get("code_challenge_method") != "S256":
            raise ValueError("the page must use the code flow with PKCE (S256)")
        code = secrets.token_urlsafe(16)
        provider.codes[code] = Grant(
            data["username"],
            data["client_id"],
            data.get("scope", ""),
            data.get("nonce"),
            data["redirect_uri"],
            data["code_challenge"],
        )
        separator = "&" if "?" in data["redirect_uri"] else "?"
        return Redirect(f"{data['redirect_uri']}{separator}{urlencode({'code': code, 'state': data['state']})}")

    @post("/token", sync_to_thread=False, status_code=200)
    def token(data: Form) -> Response[dict[str, Any]]:
        provider.grants.append(data.get("grant_type", ""))
        if data.get("grant_type") == "refresh_token":
            grant = provider.refresh_tokens.pop(data.get("refresh_token", ""), None)
            return _error("unknown refresh token") if grant is None else Response(provider.tokens(grant))
        grant = provider.codes.pop(data.get("code", ""), None)
        if grant is None or grant.redirect_uri != data.get("redirect_uri"):
            return _error("unknown code")
        if _s256(data.get("code_verifier", "")) != grant.challenge:
            return _error("the code verifier does not match the challenge")
        return Response(provider.tokens(grant))

    @get("/logout", sync_to_thread=False, status_code=302)
    def logout(request: Request[Any, Any, Any]) -> Redirect:
        return Redirect(request.query_params["post_logout_redirect_uri"])

    @get("/jwks", sync_to_thread=False)
    def jwks() -> dict[str, Any]:
        provider.key_fetches += 1
        return {"keys": [key.public_jwk() for key in provider.keys]}

    app = Litestar(
        [discovery, jwks, login_form, authorize, token, logout],
        cors_config=CORSConfig(allow_origins=["*"]),  # the page calls discovery and the token endpoint
    )
    provider.issuer, provider.server = serve_in_thread(app, "OIDC")
    return provider
