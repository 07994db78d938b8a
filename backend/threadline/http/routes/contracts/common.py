"""The seed contracts' chat routes, from one factory: each document's body, checks, options and wire differ;
the route is the same (start the answer, then `stream_answer` on the document's wire, as `/api/chat` does)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from litestar import post
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody
from litestar.response import Stream

from threadline.answers.options import AnswerOptions, NewMessage, new_id
from threadline.answers.turn import Turn
from threadline.http.dependencies import Allowance, ChatAllowance, Ctx, RequestContext
from threadline.http.errors import error_responses, json_only
from threadline.http.messages import checked_text
from threadline.http.openapi import SseOperation
from threadline.http.streams import stream_answer
from threadline.runtime import Services
from threadline.settings.answers import StreamMode
from threadline.wires.registry import Wire

EVENT_STREAM = "text/event-stream"  # every seed document's wire is server-sent events

# Start the contract's answer from its request body: (the conversation's id, the answer).
Start = Callable[[Services, str, ChatAllowance, Any], Awaitable[tuple[str, Turn]]]


@dataclass(frozen=True)
class Contract:
    """What one seed document's chat route is made of."""

    path: str
    body: type  # the request body's Struct
    start: Start
    wire: Callable[[Services], Wire]
    events: Any  # the union of its event Structs, for the API's schema
    statuses: tuple[int, ...]  # the refusals it may answer with
    summary: str


def contract_route(contract: Contract, name: str) -> HTTPRouteHandler:
    """`POST contract.path`: the answer streamed on the document's wire."""

    async def route(data: Any, ctx: RequestContext, allowance: ChatAllowance) -> Stream:
        conversation_id, turn = await contract.start(ctx.services, ctx.client_id, allowance, data)
        return await stream_answer(turn, contract.wire(ctx.services), conversation_id)

    # Litestar reads the parameters' types from the annotations: the body is the contract's own.
    route.__annotations__ = {
        "data": JSONBody[contract.body],  # type: ignore[misc,name-defined]  # a type known when the route is made
        "ctx": Ctx,
        "allowance": Allowance,
        "return": Stream,
    }
    route.__name__ = route.__qualname__ = name
    return post(
        contract.path,
        status_code=200,
        guards=[json_only],
        operation_class=SseOperation,
        responses={
            200: ResponseSpec(
                contract.events, media_type="text/event-stream", description="Its events, one per `data:`"
            ),
            **error_responses(*contract.statuses),
        },
        summary=contract.summary,
    )(route)


def plain_start(stream_mode: StreamMode) -> Start:
    """Seeds 001 and 002: `{message, conversation_id?}`, checked, in the visitor's own conversation (a 404 for an
    id that is not theirs) or a new one. The seeds have no approvals, so a call that needs one is declined."""

    async def start(services: Services, client_id: str, allowance: ChatAllowance, data: Any) -> tuple[str, Turn]:
        text = checked_text(data.message, "message")
        await allowance.spend()  # a message refused as invalid costs nothing
        if data.conversation_id:
            await services.answers.owned(client_id, data.conversation_id)
        conversation_id = data.conversation_id or new_id()
        options = AnswerOptions(stream_mode=stream_mode, interactive=False)
        return conversation_id, await services.answers.start(client_id, conversation_id, NewMessage(text), options)

    return start
