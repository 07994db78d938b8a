"""Seed 001's chat API: `POST /api/general_chat/stream` (the path of its `routers/general_chat.py`).

The request is `{message, conversation_id?}`; the answer streams as the document's typed events, tool
markers and suggestions included (wires/seed_001.py). It is the same conversation as on
every other wire: `/api/load_conversation` or `GET /api/conversations/{id}` read it back, and
`/api/cancel_stream` stops it (the stream then ends with `cancelled`).
"""

from __future__ import annotations

import msgspec
from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody
from litestar.response import Stream

from threadline.http.dependencies import Allowance, AppServices
from threadline.http.errors import error_responses, json_only
from threadline.http.openapi import SseOperation
from threadline.http.routes.contracts.common import contract_turn
from threadline.http.schemas import Id
from threadline.wires.seed_001 import HEADERS, MEDIA_TYPE, AnySeed001Event, GeneralChatEncoder


class GeneralChatRequest(msgspec.Struct):
    message: str
    conversation_id: Id | None = None


class GeneralChatController(Controller):
    path = "/api/general_chat"

    @post(
        "/stream",
        status_code=200,
        guards=[json_only],
        operation_class=SseOperation,
        responses={
            200: ResponseSpec(
                AnySeed001Event,  # type: ignore[arg-type]  # a union of Structs: Litestar types it narrower
                media_type=MEDIA_TYPE,
                description="Seed 001's typed SSE events, one per `data:`",
            ),
            **error_responses(400, 404, 409, 413, 429, 500, 503),
        },
        summary="Seed 001: send a message, the answer streams back as its typed events, with tool markers",
    )
    async def stream(
        self,
        data: JSONBody[GeneralChatRequest],
        services: AppServices,
        client_id: NamedDependency[str],
        allowance: Allowance,
    ) -> Stream:
        conversation_id, turn = await contract_turn(
            services, client_id, allowance, data.message, data.conversation_id, stream_mode="events"
        )  # events mode: for the statuses and the tools' progress
        return Stream(
            GeneralChatEncoder().encode(turn.events(await turn.opening())),
            media_type=MEDIA_TYPE,
            headers={**HEADERS, "x-conversation-id": conversation_id},
        )
