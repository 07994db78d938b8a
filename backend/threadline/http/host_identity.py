"""Who asks, as the app threadline runs inside says: a host app with a login of its own (sessions, its own
tokens) passes `Threadline(identify=...)`, an async callable that reads the request and names its user.

    async def identify(connection: ASGIConnection) -> str | Principal | None:
        return connection.session.get("user_id")     # None: an anonymous visitor, as without it

It is asked before the bearer token and the visitor cookie. The id becomes a principal of its own (a digest,
like an identity provider's users'), so it never meets an anonymous visitor's id, and its roles count for
AUTH_ADMIN_ROLE and AUTH_ROLE_RATE_LIMITS as a token's would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from litestar.connection import ASGIConnection

from threadline.http.bearer import User, principal_of

HOST_APP = "host-app"  # the issuer part of a host app's users' principals


@dataclass(frozen=True)
class Principal:
    """A host app's user: its id in that app, and the roles it has there."""

    id: str
    roles: frozenset[str] = frozenset()


Identify = Callable[[ASGIConnection[Any, Any, Any, Any]], Awaitable[str | Principal | None]]


def user_of(said: str | Principal) -> User:
    principal = said if isinstance(said, Principal) else Principal(said)
    if not isinstance(principal.id, str) or not principal.id:
        raise TypeError(f"identify() must name a user by a non-empty string id (got {principal.id!r})")
    return User(principal_of(HOST_APP, principal.id), principal.id, {}, frozenset(principal.roles))
