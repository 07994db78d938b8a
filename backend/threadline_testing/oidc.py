"""A local OpenID Connect provider for the tests: a discovery document and a key set (JWKS) over real HTTP,
RS256 and ES256 keys, rotation, and tokens signed as a provider signs them (PyJWT). It counts how often its
keys are fetched, so a test can see that verification does not fetch them per request."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from litestar import Litestar, get

from threadline_testing.standins import serve_in_thread

AUDIENCE = "https://api.threadline.test"


@dataclass
class Key:
    kid: str
    algorithm: str
    private: Any

    def public_jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.algorithm)
        jwk: dict[str, Any] = json.loads(algorithm.to_jwk(self.private.public_key()))
        return jwk | {"kid": self.kid, "alg": self.algorithm, "use": "sig"}


def new_key(algorithm: str = "RS256") -> Key:
    private = (
        rsa.generate_private_key(65537, 2048)
        if algorithm.startswith(("RS", "PS"))
        else ec.generate_private_key(ec.SECP256R1())
    )
    return Key(uuid.uuid4().hex[:12], algorithm, private)


@dataclass
class Provider:
    issuer: str = ""
    keys: list[Key] = field(default_factory=lambda: [new_key("RS256"), new_key("ES256")])
    key_fetches: int = 0
    server: Any = None

    def token(self, subject: str, *, key: Key | None = None, lifetime: float = 300, **claims: Any) -> str:
        """A token as the provider issues it for `subject`; `claims` override or add any claim."""
        key = key or self.keys[0]
        now = time.time()
        payload = {"iss": self.issuer, "sub": subject, "aud": AUDIENCE, "iat": now, "exp": now + lifetime} | claims
        return jwt.encode(payload, key.private, algorithm=key.algorithm, headers={"kid": key.kid})

    def rotate(self) -> Key:
        """A new signing key, published beside the old ones (as providers roll keys over)."""
        key = new_key("RS256")
        self.keys.append(key)
        return key

    def stop(self) -> None:
        self.server.should_exit = True


def start() -> Provider:
    provider = Provider()

    @get("/.well-known/openid-configuration", sync_to_thread=False)
    def discovery() -> dict[str, Any]:
        return {
            "issuer": provider.issuer,
            "jwks_uri": f"{provider.issuer}/jwks",
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
        }

    @get("/jwks", sync_to_thread=False)
    def jwks() -> dict[str, Any]:
        provider.key_fetches += 1
        return {"keys": [key.public_jwk() for key in provider.keys]}

    provider.issuer, provider.server = serve_in_thread(Litestar([discovery, jwks]), "OIDC")
    return provider
