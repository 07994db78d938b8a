"""Seed 002's trace retrieval: what an answer did, by its trace id or by its assistant message's id."""

from __future__ import annotations

import msgspec
from litestar import Controller, get
from litestar.params import Parameter

from threadline.http.dependencies import Ctx
from threadline.http.errors import error_responses, not_found
from threadline.http.schemas import ID_PATTERN
from threadline.runtime import Services
from threadline.storage.trace_document import Trace

TraceId = Parameter(pattern=ID_PATTERN, description="An answer's `traceId` (in its `start` and `finish` metadata)")
MessageId = Parameter(pattern=ID_PATTERN, description="An assistant message's id")


async def _with_feedback(services: Services, client_id: str, trace: Trace | None) -> Trace:
    """The trace with its answer's rating as it is now (ratings change after the trace is written)."""
    if trace is None:
        raise not_found("Trace")
    feedback = await services.storage.feedback.of_message(client_id, trace.message_id)
    return trace if feedback is None else msgspec.structs.replace(trace, feedback=feedback)


class TraceController(Controller):
    path = "/api/trace"

    @get(
        "/{trace_id:str}",
        summary="An answer's trace: its model and tool calls, timings, tokens, warnings and outcome",
        responses=error_responses(400, 404, 503),
    )
    async def get_trace(self, ctx: Ctx, trace_id: str = TraceId) -> Trace:
        return await _with_feedback(
            ctx.services, ctx.client_id, await ctx.services.observability.traces.get(ctx.client_id, trace_id)
        )

    @get(
        "/by_message/{message_id:str}",
        summary="The trace of the answer with this assistant message id (its newest, if regenerated)",
        responses=error_responses(400, 404, 503),
    )
    async def get_trace_by_message(self, ctx: Ctx, message_id: str = MessageId) -> Trace:
        trace = await ctx.services.observability.traces.by_message(ctx.client_id, message_id)
        return await _with_feedback(ctx.services, ctx.client_id, trace)
