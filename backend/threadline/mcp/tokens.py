"""The JWTs of the built-in MCP server: who is asking, and from which conversation.

A client outside the process (`/mcp`, `/mcp/rpc`) sends one, so the server's tools read that visitor's own
conversations and nobody else's; `threadline mcp-token` mints one. threadline's own answers call the tools in
process, as their visitor (mcp/in_process.py), with no token.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable

import msgspec

ALGORITHM = "HS256"
AUDIENCE = "threadline-mcp"
ISSUER = "threadline"


class Caller(msgspec.Struct, frozen=True):
    """Whom a tool call is for; both are absent for a token minted without them."""

    client_id: str | None = None
    conversation_id: str | None = None


class InvalidToken(Exception):
    """The request carries no bearer token, or one that is expired, tampered with or not ours."""


def derive_secret(threadline_secret: bytes) -> bytes:
    """A key of its own for MCP tokens, so they can never pass as client-id signatures or the reverse."""
    return hmac.new(threadline_secret, b"threadline mcp tokens", hashlib.sha256).digest()


def tokens_for(mcp_secret: str | None, visitor_ids_secret: Callable[[], bytes]) -> McpTokens:
    """MCP_JWT_SECRET when set, else a key derived from the secret that signs visitors' ids (read only then)."""
    if mcp_secret:
        return McpTokens(mcp_secret.encode())
    return McpTokens(derive_secret(visitor_ids_secret()))


class McpTokens:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def mint(self, caller: Caller, ttl: float = 300.0) -> str:
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + int(ttl)}
        if caller.client_id:
            claims["sub"] = caller.client_id
        if caller.conversation_id:
            claims["cid"] = caller.conversation_id
        import jwt  # PyJWT and the cryptography it loads (some 8 MB) only where tokens are made or checked

        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def verify(self, authorization: str | None) -> Caller:
        """The caller named by an `Authorization: Bearer <JWT>` header value."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise InvalidToken("missing bearer token")
        import jwt

        try:
            claims = jwt.decode(
                token.strip(),
                self._secret,
                algorithms=[ALGORITHM],
                audience=AUDIENCE,
                issuer=ISSUER,
                options={"require": ["exp", "iat"]},
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired") from None
        except jwt.InvalidTokenError:
            raise InvalidToken("the token is not valid") from None
        return Caller(client_id=claims.get("sub"), conversation_id=claims.get("cid"))
