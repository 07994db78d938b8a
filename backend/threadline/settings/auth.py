"""The sign-in section of the settings: who may use the server, and who operates it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from threadline.settings import Section


@dataclass(frozen=True)
class AuthSettings(Section):
    auth_issuer: str | None  # AUTH_ISSUER: the identity provider; None: anonymous visitors only
    auth_audience: str | None  # AUTH_AUDIENCE
    auth_jwks_url: str | None  # AUTH_JWKS_URL
    auth_client_id: str | None  # AUTH_CLIENT_ID: the page's own, for signing in
    auth_scopes: str  # AUTH_SCOPES
    auth_roles_claim: str  # AUTH_ROLES_CLAIM: where a token lists its user's roles
    auth_admin_role: str | None  # AUTH_ADMIN_ROLE: the operators' role
    auth_anonymous: Literal["allow", "deny"]  # AUTH_ANONYMOUS: whether visitors need not sign in
    admin_token: str | None  # CHAT_ADMIN_TOKEN: the operators' bearer token
    metrics_public: bool  # METRICS_PUBLIC
