"""Anonymous visitors: every request carries a signed client id, issued on first contact.

The id travels in an HttpOnly, SameSite=Lax cookie for browsers, or in the `X-Threadline-Client`
header for programs (curl, the Python client). Both hold the same signed token; a token whose
signature does not verify is ignored and a new identity issued, so ids cannot be forged or guessed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from http.cookies import SimpleCookie
from pathlib import Path

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "threadline_client"
HEADER = "x-threadline-client"
COOKIE_MAX_AGE = 400 * 24 * 3600  # the longest lifetime browsers accept


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


def _token_from(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == HEADER.encode():
            return value.decode("latin-1")
    for name, value in scope["headers"]:
        if name == b"cookie":
            morsel = SimpleCookie(value.decode("latin-1")).get(COOKIE)
            if morsel is not None:
                return morsel.value
    return None


class ClientIdentityMiddleware:
    """Puts the caller's client id in `scope["state"]["client_id"]`, issuing one when needed."""

    def __init__(self, app: ASGIApp, signer: Signer) -> None:
        self.app = app
        self.signer = signer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        client_id = self.signer.verify(_token_from(scope))
        issued = None
        if client_id is None:
            client_id = secrets.token_hex(16)
            issued = self.signer.sign(client_id)
        scope.setdefault("state", {})["client_id"] = client_id
        if issued is None:
            await self.app(scope, receive, send)
            return
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = f"{COOKIE}={issued}; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax{secure}"

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
