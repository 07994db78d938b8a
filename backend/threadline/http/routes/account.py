"""Signing in: `GET /api/auth/config` tells the page how, and `POST /api/account/claim` takes the conversations
of the anonymous identity a user had before signing in. A claim proves both: the bearer token (the user) and
the signed anonymous token (in the body, or the cookie or header the browser or client already sends)."""

from __future__ import annotations

import secrets

import msgspec
from litestar import Controller, Response, get, post
from litestar.params import JSONBody

from threadline.http.dependencies import AppServices, Ctx
from threadline.http.errors import AnyRequest, error_responses, json_only
from threadline.http.identity import HEADER, SIGN_IN_PATH, Signer, anonymous_token_of, identity_cookie
from threadline.refusals import Refused
from threadline.storage.claims import Claimed


class SignIn(msgspec.Struct, rename="camel", omit_defaults=True):
    anonymous: bool  # whether visitors may chat without signing in
    issuer: str | None = None  # where the page signs in (OIDC discovery), when it may
    client_id: str | None = None
    scopes: str | None = None
    audience: str | None = None  # the API the access token must be for (Auth0's `audience` parameter)


@get(SIGN_IN_PATH, summary="How the page signs in: the identity provider and the page's client id, when set")
async def sign_in(services: AppServices) -> SignIn:
    """Public: the page reads it before anyone has signed in. Without AUTH_ISSUER and AUTH_CLIENT_ID the page
    stays anonymous (`{"anonymous": true}`)."""
    settings = services.settings.auth
    if not (settings.auth_issuer and settings.auth_client_id):
        return SignIn(anonymous=settings.auth_issuer is None or settings.auth_anonymous == "allow")
    return SignIn(
        anonymous=settings.auth_anonymous == "allow",
        issuer=settings.auth_issuer,
        client_id=settings.auth_client_id,
        scopes=settings.auth_scopes,
        audience=settings.auth_audience,
    )


class ClaimRequest(msgspec.Struct, rename="camel"):
    # The anonymous identity (the `X-Threadline-Client` value); without it, the one the request carries.
    anonymous_token: str | None = None


class AccountController(Controller):
    path = "/api/account"

    @post(
        "/claim",
        status_code=200,
        guards=[json_only],
        responses=error_responses(400, 401, 403, 409, 413, 503),
        summary="Take the conversations of your anonymous identity, once signed in",
    )
    async def claim(
        self,
        request: AnyRequest,
        data: JSONBody[ClaimRequest],
        ctx: Ctx,
    ) -> Response[Claimed]:
        """Everything the anonymous identity owns becomes yours, at once; it then owns nothing. The response
        carries a fresh anonymous identity (cookie and header) for when you sign out, since the old one is
        yours now, unless something was skipped: the identity then stays, so what it kept is not lost.
        Claiming again later takes what it made since; another account cannot claim it."""
        if request.scope["state"].get("user") is None:
            raise Refused("UNAUTHORIZED", "Sign in first: conversations are claimed by a signed-in user.")
        signer: Signer = request.app.state.signer
        anonymous_id = signer.verify(data.anonymous_token or anonymous_token_of(request.scope))
        if anonymous_id is None:
            raise Refused("FORBIDDEN", "That is not an anonymous identity this server issued.")
        claimed = await ctx.services.conversation_service.claim(anonymous_id, ctx.client_id)
        if claimed.skipped:  # those conversations are still the anonymous identity's: it is kept
            return Response(claimed)
        fresh = signer.sign(secrets.token_hex(16))
        return Response(claimed, headers={"set-cookie": identity_cookie(fresh, request.scope), HEADER: fresh})
