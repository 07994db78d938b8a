"""Operator endpoints (the A/B results, `/metrics` once there are operators): for `CHAT_ADMIN_TOKEN` as the bearer,
or a signed-in user with `AUTH_ADMIN_ROLE`. Anyone else is told what is missing: 401 without credentials, 403
for a user without the role or a server with no way to be an operator."""

from __future__ import annotations

import secrets
from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler

from threadline.http.bearer import User
from threadline.http.errors import ApiError
from threadline.settings.auth import AuthSettings

Connection = ASGIConnection[Any, Any, Any, Any]


def require_operator(connection: Connection, settings: AuthSettings) -> None:
    user: User | None = connection.scope.get("state", {}).get("user")
    if user is not None and settings.auth_admin_role:
        if settings.auth_admin_role in user.roles(settings.auth_roles_claim):
            return
        raise ApiError(
            403, "FORBIDDEN", f"This is for operators: your account lacks the {settings.auth_admin_role!r} role."
        )
    token = settings.admin_token
    if not token and not settings.auth_admin_role:
        raise ApiError(403, "FORBIDDEN", "This is for operators: set CHAT_ADMIN_TOKEN (or AUTH_ADMIN_ROLE) to read it.")
    given = connection.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if not token or not secrets.compare_digest(given.encode(), token.encode()):
        raise ApiError(
            401,
            "UNAUTHORIZED",
            "Send the operators' token (Authorization: Bearer <CHAT_ADMIN_TOKEN>), or sign in as an operator.",
        )


def operators_only(connection: Connection, _: BaseRouteHandler) -> None:
    """A guard: the request must come from an operator."""
    require_operator(connection, connection.app.state.services.settings.auth)


def metrics_guard(connection: Connection, _: BaseRouteHandler) -> None:
    """`/metrics` is the operators' once there are any (CHAT_ADMIN_TOKEN or AUTH_ADMIN_ROLE), unless METRICS_PUBLIC:
    what it counts (answers, tokens, errors, tools by name) is not every visitor's to read."""
    settings: AuthSettings = connection.app.state.services.settings.auth
    if (settings.auth_admin_role or settings.admin_token) and not settings.metrics_public:
        require_operator(connection, settings)
