"""A/B comparisons: the second answer's stream, the record, the vote, and the counts for operators.

A comparison starts at POST /api/chat (`compareProfiles`, or CHAT_AB_PROFILES), whose response carries
answer A; see `AnswerService.compare` (answers/service.py).
"""

from __future__ import annotations

import msgspec
from litestar import Controller, Response, get, post
from litestar.params import JSONBody, Parameter
from litestar.response import Stream

from threadline.http.dependencies import AppServices, Ctx
from threadline.http.errors import AnyRequest, ApiError, error_responses, json_only, not_found
from threadline.http.operators import require_operator
from threadline.http.schemas import ID_PATTERN
from threadline.http.streams import choose_wire
from threadline.storage.comparisons import Comparison, PairResult, Preference, results

ComparisonId = Parameter(pattern=ID_PATTERN, description="The comparison id (from the answer's start metadata)")
ProfileFilter = Parameter(required=False, description="Only this profile's pairs, from its side")


class VoteRequest(msgspec.Struct):
    preference: Preference


class VoteResult(msgspec.Struct, rename="camel"):
    success: bool
    preference: Preference
    continuation: str  # "A" or "B": the answer the conversation carries on with


def _not_found() -> ApiError:
    return not_found("Comparison")


class ComparisonController(Controller):
    path = "/api/comparisons"

    @get(
        "/{comparison_id:str}",
        responses=error_responses(400, 404, 503),
        summary="An A/B comparison: both answers (texts once written), their profiles and models, and the vote",
    )
    async def get_comparison(self, ctx: Ctx, comparison_id: str = ComparisonId) -> Comparison:
        comparison = await ctx.services.storage.comparisons.get(ctx.client_id, comparison_id)
        if comparison is None:
            raise _not_found()
        return comparison

    @get(
        "/{comparison_id:str}/stream",
        responses=error_responses(400, 404, 406, 503),
        summary="Answer B while it is written, from its first chunk, on the wire POST /api/chat would use; "
        "204 when it is not streaming here (read its text from GET /api/comparisons/{id})",
    )
    async def second_answer(
        self,
        request: AnyRequest,
        ctx: Ctx,
        comparison_id: str = ComparisonId,
    ) -> Stream | Response[None]:
        """One reader: it takes the answer's events from their queue. Closing it stops answer B."""
        wire = choose_wire(request)
        turn = ctx.services.answers.second_answers.get(comparison_id)
        if turn is None or turn.client_id != ctx.client_id:
            if await ctx.services.storage.comparisons.get(ctx.client_id, comparison_id) is None:
                raise _not_found()
            return Response(None, status_code=204)
        del ctx.services.answers.second_answers[comparison_id]
        return Stream(wire.encode(turn.events([])), media_type=wire.media_type, headers=wire.headers)

    @post(
        "/{comparison_id:str}/vote",
        status_code=200,
        guards=[json_only],
        responses=error_responses(400, 404, 409, 413, 503),
        summary="Vote A, B or tie; the chosen answer (A on a tie) becomes the conversation's continuation",
        description="Voting again changes the vote (every vote is kept with its time). The continuation changes "
        "with it while the compared message is still the conversation's last.",
    )
    async def vote(
        self,
        data: JSONBody[VoteRequest],
        ctx: Ctx,
        comparison_id: str = ComparisonId,
    ) -> VoteResult:
        store = ctx.services.storage.comparisons
        comparison = await store.get(ctx.client_id, comparison_id)
        if comparison is None:
            raise _not_found()
        if not comparison.finished:
            raise ApiError(409, "CONFLICT", "Both answers are still being written: vote once they have finished.")
        voted = await store.vote(ctx.client_id, comparison_id, data.preference)
        if voted is None:  # its conversation was deleted meanwhile
            raise _not_found()
        continuation = await ctx.services.answers.follow_vote(ctx.client_id, voted)
        return VoteResult(success=True, preference=data.preference, continuation=continuation)

    @get(
        "/",
        responses=error_responses(400, 401, 403, 503),
        summary="For operators (Authorization: Bearer CHAT_ADMIN_TOKEN): votes per pair of profiles",
    )
    async def comparison_results(
        self, request: AnyRequest, services: AppServices, profile: str | None = ProfileFilter
    ) -> list[PairResult]:
        require_operator(request, services.settings.auth)
        return results(await services.storage.comparisons.counts(), profile)
