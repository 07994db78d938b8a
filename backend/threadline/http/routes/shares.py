"""Read-only links: the owner shares a snapshot of a conversation (and revokes it); anyone with the link reads
it at GET /api/shared/{shareId}, and the page shows it at /share/{shareId}. storage/shares.py keeps them."""

from __future__ import annotations

from litestar import Controller, Response, delete, get, post
from litestar.openapi import ResponseSpec
from litestar.params import Parameter

from threadline.http.dependencies import AppServices, ConversationId, Ctx, OwnedConversation
from threadline.http.errors import error_responses, not_found
from threadline.http.routes.conversations import detail
from threadline.http.routes.files import FileId, file_response
from threadline.storage.shares import Share, Shared

ShareId = Parameter(pattern=r"^[A-Za-z0-9_-]{24}(?!\n)$", description="The link's id, as sharing gave it")
UNLISTED = {"x-robots-tag": "noindex, nofollow", "cache-control": "no-store", "referrer-policy": "no-referrer"}


class ShareController(Controller):
    path = "/api/conversations/{conversation_id:str}/share"

    @post(
        "/",
        status_code=201,
        summary="Share a read-only snapshot of a conversation by link (again: bring it up to date)",
        responses=error_responses(400, 404, 503),
    )
    async def share(
        self,
        ctx: Ctx,
        conversation: OwnedConversation,
        conversation_id: str = ConversationId,
    ) -> Share:
        """The snapshot is the branch shown now, without ratings, traces or the conversation's id; its link
        stays the same when shared again."""
        await ctx.services.answers.access.check("update", ctx.client_id, conversation_id)  # it is published
        shown = await detail(ctx.services, ctx.client_id, conversation)
        return await ctx.services.storage.shares.share(ctx.client_id, conversation.id, shown.title, shown.messages)

    @get(
        "/",
        summary="The conversation's link, when it is shared; 204 when it is not",
        responses={
            204: ResponseSpec(None, description="The conversation is not shared"),
            **error_responses(400, 404, 503),
        },
    )
    async def link(self, ctx: Ctx, conversation_id: str = ConversationId) -> Share | Response[None]:
        """A conversation that is not shared is no error (the page asks each time it opens its Share dialog);
        another visitor's conversation is not found, as a missing one."""
        await ctx.services.answers.access.check("read", ctx.client_id, conversation_id)
        share = await ctx.services.storage.shares.of_conversation(ctx.client_id, conversation_id)
        if share is None:
            await ctx.services.answers.owned(ctx.client_id, conversation_id)
            return Response(None, status_code=204)
        return share

    @delete("/", summary="Stop sharing: the link is not found from now on", responses=error_responses(400, 404, 503))
    async def revoke(self, ctx: Ctx, conversation_id: str = ConversationId) -> None:
        await ctx.services.answers.access.check("update", ctx.client_id, conversation_id)
        if not await ctx.services.storage.shares.revoke(ctx.client_id, conversation_id):
            raise not_found("Share")


class SharedController(Controller):
    path = "/api/shared/{share_id:str}"

    @get("/", summary="A shared conversation, read-only, as it was when shared", responses=error_responses(400, 404))
    async def shared(self, services: AppServices, share_id: str = ShareId) -> Response[Shared]:
        found = await services.storage.shares.shared(share_id)
        if found is None:
            raise not_found("Share")
        return Response(found[1], headers=UNLISTED)

    @get(
        "/files/{file_id:str}",
        summary="A file a shared conversation shows",
        media_type="application/octet-stream",
        responses=error_responses(400, 404),
    )
    async def shared_file(
        self, services: AppServices, share_id: str = ShareId, file_id: str = FileId
    ) -> Response[bytes]:
        found = await services.storage.shares.shared(share_id)
        if found is None or file_id not in found[2]:
            raise not_found("File")
        return await file_response(services, found[0], file_id)
