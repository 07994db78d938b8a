"""The sign-in settings: who may use the server, and who operates it."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from threadline.settings.reading import Section, SettingsError, env


def https_url(raw: str, name: str) -> str:
    """An identity provider's address: https, or http for one on this machine (a local stand-in)."""
    local = raw.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]"))
    if not (raw.startswith("https://") or local):
        raise SettingsError(f"{name} must be an https:// URL (http:// only on this machine) (got {raw!r})")
    return raw  # as the provider writes it: a token's `iss` must match it exactly, trailing slash and all


def signing_secret(raw: str, name: str) -> str:
    """The key that signs visitors' ids: one anyone could guess would let anyone be any visitor."""
    if len(raw.encode()) < 32:
        raise SettingsError(f"{name} must be at least 32 bytes long, e.g. the output of `openssl rand -hex 32`")
    return raw


class AuthSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Accounts and sign-in"

    client_id_secret: Annotated[
        str | None,
        env(
            "THREADLINE_SECRET",
            help="the key that signs visitors' anonymous ids, at least 32 bytes; set the same value on every "
            "instance behind one load balancer",
            read=signing_secret,
            default="generated once into `<data dir>/client-id-secret`",
        ),
    ] = None
    auth_issuer: Annotated[
        str | None,
        env(
            "AUTH_ISSUER",
            help="your OpenID Connect provider's issuer URL: every endpoint then accepts `Authorization: Bearer "
            "<JWT>` from it, checked against its published keys (see [Accounts](../guides/accounts.md))",
            read=https_url,
        ),
    ] = None
    auth_audience: Annotated[
        str | None,
        env("AUTH_AUDIENCE", help="the audience (`aud`) tokens must name: your API's identifier at the provider"),
    ] = None
    auth_jwks_url: Annotated[
        str | None,
        env(
            "AUTH_JWKS_URL",
            help="where the provider publishes its keys, when that is not in its discovery document",
            default="the discovery document's `jwks_uri`",
            read=https_url,
        ),
    ] = None
    auth_client_id: Annotated[
        str | None,
        env(
            "AUTH_CLIENT_ID",
            help="with `AUTH_ISSUER`: the chat page's client id at the provider (a public client, authorization "
            "code with PKCE); the page then offers to sign in",
            default="none: the page stays anonymous",
        ),
    ] = None
    auth_scopes: Annotated[
        str,
        env(
            "AUTH_SCOPES",
            help="the scopes the page asks for; `offline_access` brings the refresh token it renews sign-ins with",
        ),
    ] = "openid profile email offline_access"
    auth_roles_claim: Annotated[
        str,
        env(
            "AUTH_ROLES_CLAIM",
            help="the token claim that lists the user's roles: a name (`roles`, a namespaced "
            "`https://example.com/roles`) or a dotted path (Keycloak's `realm_access.roles`)",
        ),
    ] = "roles"
    auth_admin_role: Annotated[
        str | None,
        env(
            "AUTH_ADMIN_ROLE",
            help="the role of operators: they read the A/B results and, unless `METRICS_PUBLIC=true`, `/metrics` "
            "(`CHAT_ADMIN_TOKEN` works too)",
        ),
    ] = None
    auth_anonymous: Annotated[
        Literal["allow", "deny"],
        env(
            "AUTH_ANONYMOUS",
            help="with `AUTH_ISSUER`: `allow` lets visitors without a token chat anonymously, `deny` answers them 401",
        ),
    ] = "allow"
    admin_token: Annotated[
        str | None,
        env(
            "CHAT_ADMIN_TOKEN",
            help="the bearer token operators send to read the A/B results (`GET /api/comparisons`) and, unless "
            "`METRICS_PUBLIC=true`, `/metrics`; unset (and no `AUTH_ADMIN_ROLE`), nobody reads the results and "
            "`/metrics` is open",
        ),
    ] = None
    metrics_public: Annotated[
        bool,
        env(
            "METRICS_PUBLIC",
            help="with `CHAT_ADMIN_TOKEN` or `AUTH_ADMIN_ROLE`: `true` keeps `/metrics` open to any scraper",
        ),
    ] = False
