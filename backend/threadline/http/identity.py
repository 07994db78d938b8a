"""Who asks: the user a host app names (http/host_identity.py), else a signed-in user (a bearer token from the
team's identity provider, http/bearer.py), else an anonymous visitor with a signed client id, issued on first
contact. Everything is owned by that id.

The visitor's id travels in an HttpOnly, SameSite=Lax cookie for browsers, or in the `X-Threadline-Client`
header for programs (curl, the Python client). Both hold the same signed token; a token whose
signature does not verify is ignored and a new identity issued, so ids cannot be forged or guessed.
A bearer token that does not verify is refused (401), never taken for an anonymous visit.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
from http.cookies import SimpleCookie
from pathlib import Path

from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from threadline import mount_path
from threadline.http.bearer import BearerTokens, InvalidToken, User
from threadline.http.host_identity import Identify, Principal, user_of
from threadline.http.page_assets import ASSETS_PATH
from threadline.refusals import Refused

log = logging.getLogger(__name__)

COOKIE = "threadline_client"
HEADER = "x-threadline-client"
COOKIE_MAX_AGE = 400 * 24 * 3600  # the longest lifetime browsers accept
SHARED_PATH = "/api/shared/"  # what a conversation's link shows: open to anyone with the link
SIGN_IN_PATH = "/api/auth/config"  # how to sign in: open to all, also where anonymous visitors are turned away


class Signer:
    def __init__(self, secret: bytes) -> None:
        self.secret = secret

    def _signature(self, client_id: str) -> str:
        digest = hmac.new(self.secret, client_id.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:24]).decode().rstrip("=")

    def sign(self, client_id: str) -> str:
        return f"{client_id}.{self._signature(client_id)}"

    def verify(self, token: str | None) -> str | None:
        """The client id in a token, or None when the token is missing, malformed or tampered with."""
        client_id, _, signature = (token or "").partition(".")
        if (
            client_id
            and signature
            and (token or "").isascii()
            and hmac.compare_digest(signature, self._signature(client_id))
        ):
            return client_id
        return None


def load_secret(configured: str | None, data_dir: Path) -> bytes:
    """The configured secret, else one generated once and kept in the data directory across restarts."""
    if configured:
        return configured.encode()
    path = data_dir / "client-id-secret"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        draft = data_dir / f".client-id-secret.{secrets.token_hex(8)}"
        draft.touch(mode=0o600)
        draft.write_bytes(secrets.token_urlsafe(32).encode())
        try:  # a link cannot replace a file: of processes starting together, the first one's secret wins
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_bytes().strip()


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return value.decode("latin-1")
    return None


def _bearer_token(authorization: str | None) -> str | None:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def identity_cookie(token: str, scope: Scope) -> str:
    """The Set-Cookie value that gives a browser this signed anonymous identity."""
    secure = "; Secure" if scope.get("scheme") == "https" else ""
    return f"{COOKIE}={token}; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax{secure}"


def anonymous_token_of(scope: Scope) -> str | None:
    """The signed anonymous identity a request carries: the header, else the cookie."""
    if (token := _header(scope, HEADER.encode())) is not None:
        return token
    for name, value in scope["headers"]:
        if name == b"cookie":
            morsel = SimpleCookie(value.decode("latin-1")).get(COOKIE)
            if morsel is not None:
                return morsel.value
    return None


def _public(path: str) -> bool:
    """Open to visitors who are not signed in even where only signed-in users are answered: the page, how to
    sign in, and a conversation's read-only link."""
    return not path.startswith("/api/") or path == SIGN_IN_PATH or path.startswith(SHARED_PATH)


class ClientIdentityMiddleware:
    """Puts the caller's id in `scope["state"]["client_id"]` (and a signed-in user in `["user"]`), issuing a
    visitor's id when needed. `bearer`: tokens of the team's identity provider are accepted, and without one
    a visitor is let in only when `anonymous`. `admin_token` (CHAT_ADMIN_TOKEN) is an operator's, which the
    operator endpoints check; `/mcp` checks its own tokens."""

    def __init__(
        self,
        app: ASGIApp,
        signer: Signer,
        bearer: BearerTokens | None = None,
        anonymous: bool = True,
        admin_token: str | None = None,
        identify: Identify | None = None,
    ) -> None:
        self.app = app
        self.signer = signer
        self.bearer = bearer
        self.anonymous = anonymous
        self.admin_token = admin_token
        self.identify = identify  # a host app's own login (http/host_identity.py), asked first

    async def _identified(self, scope: Scope, receive: Receive, send: Send, *, public: bool) -> str | Principal | None:
        """Who the host app (or a langgraph.json's auth) says asks. Its refusal, or a failure of its own (it raised,
        or named no one by a non-empty string), is the answer on every route but the public ones (`/health`, the
        page), which go on with an anonymous visitor."""
        assert self.identify is not None
        try:
            said = await self.identify(ASGIConnection(scope, receive, send))
            if said is not None:
                user_of(said)  # a name it cannot be: its failure, said now
            return said
        except Refused:
            if public:
                return None
            raise
        except Exception:
            if public:
                log.exception("identify() failed: answered as an anonymous visitor on this public route")
                return None
            raise

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The page's built assets are the same for everyone and cached for good: no identity, no cookie.
        if scope["type"] != ScopeType.HTTP or scope["path"].startswith(ASSETS_PATH):
            await self.app(scope, receive, send)
            return
        path = mount_path.local(scope["path"])  # under a host app's prefix, the path as threadline names it
        if self.identify is not None and not path.startswith("/mcp"):
            said = await self._identified(scope, receive, send, public=_public(path))
            if said is not None:
                user = user_of(said)
                scope.setdefault("state", {}).update(client_id=user.principal, user=user)
                await self.app(scope, receive, send)
                return
            if self.bearer is None and not (self.anonymous or _public(path)):
                raise Refused("UNAUTHORIZED", "Sign in first: this server answers signed-in users only.")
        if self.bearer is not None and not path.startswith("/mcp"):
            token = _bearer_token(_header(scope, b"authorization"))
            admin = (self.admin_token or "").encode()
            operator = bool(token and admin and hmac.compare_digest(token.encode(), admin))
            if token and not operator:  # an operator's script is checked by the operator endpoints
                user = await self._user(self.bearer, token)
                scope.setdefault("state", {}).update(client_id=user.principal, user=user)
                await self.app(scope, receive, send)
                return
            if not (self.anonymous or operator or _public(path)):
                raise Refused("UNAUTHORIZED", "Sign in first: this server answers signed-in users only.")
        client_id = self.signer.verify(anonymous_token_of(scope))
        issued = None
        if client_id is None:
            client_id = secrets.token_hex(16)
            issued = self.signer.sign(client_id)
        scope.setdefault("state", {})["client_id"] = client_id
        if issued is None:
            await self.app(scope, receive, send)
            return
        cookie = identity_cookie(issued, scope)

        async def send_with_identity(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    *message.get("headers", []),
                    (b"set-cookie", cookie.encode()),
                    (HEADER.encode(), issued.encode()),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_identity)

    @staticmethod
    async def _user(bearer: BearerTokens, token: str) -> User:
        try:
            return await bearer.user(token)
        except InvalidToken as error:
            raise Refused("UNAUTHORIZED", f"The bearer token is not valid: {error}.") from None
