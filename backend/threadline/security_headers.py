"""Headers that keep the page from being framed, sniffed or used to leak a conversation to another host.

The Content-Security-Policy lets the page load and connect only to this server (and the configured
CORS origins), load images only from itself, and never be framed; the chat page shows images in
answers as links for the same reason (see frontend/src/Message.tsx).
"""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send


def policy(cors_origins: tuple[str, ...]) -> str:
    connect = " ".join(("'self'", *cors_origins))
    return (
        f"default-src 'self'; img-src 'self' data:; connect-src {connect}; frame-ancestors 'none'; "
        "base-uri 'self'; form-action 'self'; object-src 'none'"
    )


class SecurityHeaders:
    """ASGI middleware adding the headers to every response."""

    def __init__(self, app: ASGIApp, cors_origins: tuple[str, ...]) -> None:
        self.app = app
        self.headers = [
            (b"content-security-policy", policy(cors_origins).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"strict-origin-when-cross-origin"),
            (b"x-frame-options", b"DENY"),
        ]  # for browsers older than frame-ancestors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.headers]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
