"""What handlers declare instead of writing it again: who asks, their own conversation, and the chat rate limit.

`ctx: RequestContext` is who asks (`ctx.client_id`) with the app's services and limits: one dependency, so Litestar
resolves it alone (it resolves a batch of several in a task group, a task per dependency, which costs more than
these lookups: Litestar issue #4563; docs/performance.md). A handler that needs only the services declares
`services: AppServices`. `conversation: OwnedConversation` (beside a `conversation_id` path parameter) is the
caller's conversation, a 404 for another's exactly as for a missing one; `allowance: Allowance` is the caller's
CHAT_RATE_LIMIT (or their role's), which a route that starts an answer spends once the request is valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from litestar.params import Parameter, SkipValidation

from threadline.http.bearer import User
from threadline.http.errors import AnyRequest
from threadline.http.limits import Limits
from threadline.http.rate_limit import RateLimit
from threadline.http.schemas import ID_PATTERN
from threadline.runtime import Services
from threadline.storage.conversation_list import ConversationSummary

# Injected as they are: msgspec has nothing to validate in the services themselves.
AppServices: TypeAlias = SkipValidation[Services]
OwnedConversation: TypeAlias = SkipValidation[ConversationSummary]
ConversationId = Parameter(pattern=ID_PATTERN, description="The conversation id (yours: ids are scoped per visitor)")


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Who asks (their id, from http/identity.py) and what the app answers them with."""

    client_id: str
    services: Services
    limits: Limits


def context_of(request: AnyRequest) -> RequestContext:
    state = request.app.state
    return RequestContext(str(request.state.client_id), state.services, state.limits)


Ctx: TypeAlias = SkipValidation[RequestContext]


async def owned_conversation(ctx: Ctx, conversation_id: str = ConversationId) -> ConversationSummary:
    return await ctx.services.answers.owned(ctx.client_id, conversation_id)


@dataclass(frozen=True)
class ChatAllowance:
    """CHAT_RATE_LIMIT for the caller: a signed-in user's own, else their address's (anonymous ids are free to
    make); a handler spends it once its request is found valid, so a refused request costs nothing."""

    limit: RateLimit
    key: str
    limits: Limits  # the app's others: FILE_BYTES_PER_DAY is counted against the same key

    async def spend(self) -> None:
        await self.limit.check(self.key)


def limits_of(request: AnyRequest) -> Limits:
    """The rate limits, made with the app (before its services start)."""
    limits: Limits = request.app.state.limits
    return limits


def limit_key(request: AnyRequest, limits: Limits) -> str:
    """Whose limits a request counts against: the signed-in user (http/bearer.py), else the client address."""
    user = request.scope.get("state", {}).get("user")
    return str(user.principal) if user else limits.client_address.of(request.scope)


def chat_allowance(request: AnyRequest, ctx: Ctx) -> ChatAllowance:
    """A signed-in user's limit is their role's (AUTH_ROLE_RATE_LIMITS), when one of theirs is listed."""
    services, limits = ctx.services, ctx.limits
    user: User | None = request.scope.get("state", {}).get("user")
    if user is not None and limits.chat_by_role:
        roles = user.roles(services.settings.auth.auth_roles_claim)
        for role, limit in limits.chat_by_role:
            if role in roles:
                return ChatAllowance(limit, user.principal, limits)
    return ChatAllowance(limits.chat, limit_key(request, limits), limits)


Allowance: TypeAlias = SkipValidation[ChatAllowance]
