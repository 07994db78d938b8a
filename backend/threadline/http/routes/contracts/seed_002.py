"""Seed 002's chat API, with its names and snake_case fields, over the same conversations as `/api/chat`.

`POST /api/get_chat_response_stream` streams an answer as its events (wires/seed_002.py);
`load_conversation` and `list_conversations` read what the sidebar and a reloaded page read;
`/api/cancel_stream` (http/routes/chat.py) stops an answer, whose trace then says `cancelled`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, get, post
from litestar.params import JSONBody, QueryParameter

from threadline.conversations.history import ui_messages
from threadline.conversations.state import load
from threadline.http.dependencies import Ctx
from threadline.http.errors import AnyRequest, error_responses, json_only
from threadline.http.routes.contracts.common import Contract, contract_route, plain_start
from threadline.http.schemas import ID_PATTERN, Id
from threadline.runtime import Services
from threadline.storage.threads import thread_of
from threadline.wires.registry import seed_002_wire
from threadline.wires.seed_002 import AnySeed002Event


class ChatResponseRequest(msgspec.Struct):
    message: str
    conversation_id: Id | None = None


class LoadConversationRequest(msgspec.Struct):
    conversation_id: Id


class StoredMessage(msgspec.Struct):
    message_id: str
    role: str
    content: str
    created_at: str | None
    feedback: str | None  # an answer's rating, "up" or "down"; None when it has none
    trace_id: str | None = None


class LoadedConversation(msgspec.Struct):
    conversation_id: str
    title: str
    created_at: datetime
    last_message_at: datetime
    messages: list[StoredMessage]


class ListedConversation(msgspec.Struct):
    conversation_id: str
    title: str
    created_at: datetime
    last_message_at: datetime


def _stored(message: dict[str, Any]) -> StoredMessage:
    metadata = message.get("metadata") or {}
    text = "".join(part.get("text", "") for part in message["parts"] if part["type"] == "text")
    return StoredMessage(
        message_id=message["id"],
        role=message["role"],
        content=text,
        created_at=metadata.get("createdAt"),
        feedback=(metadata.get("feedback") or {}).get("rating"),
        trace_id=metadata.get("traceId"),
    )


async def _load(services: Services, client_id: str, conversation_id: str) -> LoadedConversation:
    conversation = await services.answers.owned(client_id, conversation_id)
    history = await load(services.graph, thread_of(client_id, conversation_id))
    feedback = await services.storage.feedback.of_conversation(client_id, conversation_id)
    return LoadedConversation(
        conversation_id=conversation.id,
        title=conversation.title,
        created_at=conversation.created_at,
        last_message_at=conversation.last_message_at,
        messages=[_stored(message) for message in ui_messages(history, conversation_id, feedback)],
    )


get_chat_response_stream = contract_route(
    Contract(
        path="/api/get_chat_response_stream",
        body=ChatResponseRequest,
        start=plain_start("messages"),
        wire=lambda services: seed_002_wire(services.settings.mcp.tool_output_preview),
        events=AnySeed002Event,
        statuses=(400, 404, 409, 413, 429, 500, 503),
        summary="Seed 002: send a message, the answer streams back as its SSE events",
    ),
    "get_chat_response_stream",
)


class Seed002Controller(Controller):
    path = "/api"

    @post(
        "/load_conversation",
        status_code=200,
        guards=[json_only],
        responses=error_responses(400, 404, 503),
        summary="Seed 002: a conversation's messages in order, each with its feedback",
    )
    async def load_conversation(
        self,
        data: JSONBody[LoadConversationRequest],
        ctx: Ctx,
    ) -> LoadedConversation:
        return await _load(ctx.services, ctx.client_id, data.conversation_id)

    @get(
        "/load_conversation",
        responses=error_responses(400, 404, 503),
        summary="Seed 002: the same, with ?conversation_id=",
    )
    async def load_conversation_by_query(
        self,
        ctx: Ctx,
        conversation_id: Annotated[str, QueryParameter(pattern=ID_PATTERN)],
    ) -> LoadedConversation:
        return await _load(ctx.services, ctx.client_id, conversation_id)

    @get(
        "/list_conversations",
        responses=error_responses(503),
        summary="Seed 002: your conversations, most recent message first",
    )
    async def list_conversations(
        self,
        request: AnyRequest,
        ctx: Ctx,
        token: Annotated[str | None, QueryParameter(name="client_id", max_length=256)] = None,
    ) -> list[ListedConversation]:
        """A seed 002 client may name itself with `?client_id=`: the signed token the server issued it (the
        `X-Threadline-Client` header's value). A bare or forged id names no one: the caller's own list."""
        client_id = request.app.state.signer.verify(token) or ctx.client_id
        found = await ctx.services.conversations.list(client_id)
        return [
            ListedConversation(
                conversation_id=row.id, title=row.title, created_at=row.created_at, last_message_at=row.last_message_at
            )
            for row in await ctx.services.answers.access.visible(client_id, found, lambda row: row.id, len(found))
        ]
