"""Rating an answer: `PUT` / `DELETE /api/messages/{message_id}/feedback`, for the visitor's own answers only."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, delete, put
from litestar.params import JSONBody, Parameter

from threadline.conversations.state import load
from threadline.http.dependencies import Ctx
from threadline.http.errors import error_responses, json_only, not_found
from threadline.http.messages import storable
from threadline.http.schemas import ID_PATTERN
from threadline.runtime import Services
from threadline.storage.feedback import Feedback, RatedAnswer, Rating
from threadline.storage.threads import thread_of

MAX_COMMENT_CHARS = 2_000
MessageId = Parameter(pattern=ID_PATTERN, description="The assistant message's id")


class FeedbackRequest(msgspec.Struct):
    rating: Rating
    comment: Annotated[str, msgspec.Meta(max_length=MAX_COMMENT_CHARS)] | None = None


async def find_answer(services: Services, client_id: str, message_id: str) -> RatedAnswer | None:
    """The visitor's answer with this message id, None when they have none: its trace row names its
    conversation (one index lookup), which must still hold it (a regenerated answer is gone from it)."""
    conversation_id = await services.observability.traces.conversation_of(client_id, message_id)
    if conversation_id is None:
        return None
    conversation = await load(services.graph, thread_of(client_id, conversation_id))
    if (question := conversation.question_answered_by(message_id)) is None:
        return None
    return RatedAnswer(message_id, conversation_id, conversation.records[question].get("trace_id"))


class FeedbackController(Controller):
    path = "/api/messages/{message_id:str}/feedback"

    @put(
        "/",
        guards=[json_only],
        responses=error_responses(400, 404, 413, 503),
        summary="Rate an answer (thumbs up or down, with an optional comment); again to change it",
    )
    async def set_feedback(
        self,
        data: JSONBody[FeedbackRequest],
        ctx: Ctx,
        message_id: str = MessageId,
    ) -> Feedback:
        comment = storable((data.comment or "").strip(), "comment", "comment") or None
        answer = await find_answer(ctx.services, ctx.client_id, message_id)
        if answer is None:
            raise not_found("Message")
        return await ctx.services.storage.feedback.set(ctx.client_id, answer, data.rating, comment)

    @delete("/", responses=error_responses(400, 404, 503), summary="Take back an answer's rating")
    async def clear_feedback(self, ctx: Ctx, message_id: str = MessageId) -> None:
        if await find_answer(ctx.services, ctx.client_id, message_id) is None:
            raise not_found("Message")
        await ctx.services.storage.feedback.clear(ctx.client_id, message_id)
