"""Signed-in users: `Authorization: Bearer <JWT>` from the team's OpenID Connect provider (AUTH_ISSUER).

PyJWT does the JOSE work (the key set, signature, `exp`/`nbf`/`iss`/`aud`); this keeps the provider's keys:
found through its discovery document, fetched once, and fetched again only for a key id it has not seen
(a rotation), at most once per `REFRESH_EVERY` seconds whatever a flood of unknown ids asks. Only
asymmetric algorithms are accepted, each only with a key of its own type: never `none`, never HMAC.
The user is the token's `sub`, scoped by issuer, as a principal id shaped like an anonymous visitor's.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    import jwt

log = logging.getLogger(__name__)

ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"})
LEEWAY = 30.0  # seconds of clock difference allowed on `exp` and `nbf`
REFRESH_EVERY = 30.0  # at most one fetch of the key set in this long, however many unknown key ids arrive


class InvalidToken(Exception):
    """A bearer token that is not one of the provider's, or not (or no longer) valid; the message says why."""


@dataclass(frozen=True)
class User:
    principal: str  # the id everything is owned by: `u` and a digest of issuer and subject
    subject: str
    claims: dict[str, Any]
    granted: frozenset[str] = frozenset()  # roles given besides the claims' (a host app's, http/host_identity.py)

    def roles(self, claim: str) -> frozenset[str]:
        """The roles `claim` lists: a claim by that name, else a dotted path (`realm_access.roles`); a list of
        names, or one string of them separated by spaces."""
        value: Any = self.claims.get(claim)
        if value is None:
            value = self.claims
            for step in claim.split("."):
                value = value.get(step) if isinstance(value, dict) else None
        names = value.split() if isinstance(value, str) else value if isinstance(value, list) else []
        return frozenset(name for name in names if isinstance(name, str)) | self.granted


def principal_of(issuer: str, subject: str) -> str:
    """A fixed-length id for the user, which cannot collide with an anonymous visitor's (32 hex digits)."""
    return "u" + hashlib.sha256(f"{issuer}\0{subject}".encode()).hexdigest()[:32]


class BearerTokens:
    def __init__(self, issuer: str, audience: str | None, jwks_url: str | None, http: httpx.AsyncClient) -> None:
        self.issuer = issuer
        self.audience = audience
        self.jwks_url = jwks_url
        self.http = http
        self.keys: dict[str, jwt.PyJWK] = {}
        self.fetched_at = -REFRESH_EVERY
        self.fetching: asyncio.Lock = asyncio.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> BearerTokens:
        return self  # one key cache for the app: Litestar copies the layers its middleware is declared on

    async def user(self, token: str) -> User:
        import jwt  # PyJWT and the cryptography it loads (some 8 MB) only where tokens are checked

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise InvalidToken(f"not a JWT: {error}") from None
        algorithm, key_id = header.get("alg"), header.get("kid")
        if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
            raise InvalidToken(f"algorithm {algorithm!r} is not accepted")
        key = await self._key(str(key_id or ""))
        if key.algorithm_name != algorithm:
            raise InvalidToken(f"the key {key_id!r} is not for {algorithm}")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "sub"], "verify_aud": self.audience is not None},
            )
        except jwt.PyJWTError as error:
            raise InvalidToken(str(error)) from None
        return User(principal_of(self.issuer, claims["sub"]), claims["sub"], claims)

    async def _key(self, key_id: str) -> jwt.PyJWK:
        if (key := self.keys.get(key_id)) is not None:
            return key
        async with self.fetching:  # one fetch at a time; those who waited find its keys
            if key_id not in self.keys and time.monotonic() - self.fetched_at >= REFRESH_EVERY:
                await self._fetch()
        if (key := self.keys.get(key_id)) is None:
            raise InvalidToken(f"no key {key_id!r} in the provider's key set")
        return key

    async def _fetch(self) -> None:
        import jwt

        self.fetched_at = time.monotonic()
        try:
            if self.jwks_url is None:
                discovery = await self.http.get(f"{self.issuer.rstrip('/')}/.well-known/openid-configuration")
                self.jwks_url = str(discovery.raise_for_status().json()["jwks_uri"])
            response = (await self.http.get(self.jwks_url)).raise_for_status()
            key_set = jwt.PyJWKSet.from_dict(response.json())
        except (httpx.HTTPError, ValueError, KeyError, jwt.PyJWTError) as error:
            log.warning("could not fetch the identity provider's keys: %s", error)
            return  # the keys known so far stay; the next unknown key id tries again after REFRESH_EVERY
        self.keys = {key.key_id: key for key in key_set.keys if key.key_id and key.algorithm_name in ALGORITHMS}
