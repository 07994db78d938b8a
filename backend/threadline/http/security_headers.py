"""Headers that keep the page from being framed, sniffed or used to leak a conversation to another host.

The Content-Security-Policy lets the page load and connect only to this server (and the configured CORS
origins, and the identity provider the page signs in with), load images only from itself, and never be
framed; the chat page shows images in answers as links for the same reason (see frontend/src/Message.tsx).
"""

from __future__ import annotations

from litestar.types import Message, Scope


def policy(connect_to: tuple[str, ...]) -> str:
    connect = " ".join(("'self'", *connect_to))
    return (
        f"default-src 'self'; img-src 'self' data: blob:; connect-src {connect}; frame-ancestors 'none'; "
        "base-uri 'self'; form-action 'self'; object-src 'none'"
    )


class SecurityHeaders:
    """A `before_send` hook adding the headers to every response: Litestar runs it for what its exception
    handlers answer outside the middleware too (a refusal raised by a middleware, an unknown route)."""

    def __init__(self, connect_to: tuple[str, ...]) -> None:
        self.headers = [
            (b"content-security-policy", policy(connect_to).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"strict-origin-when-cross-origin"),
            (b"x-frame-options", b"DENY"),
        ]  # for browsers older than frame-ancestors

    async def __call__(self, message: Message, scope: Scope) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *self.headers]
