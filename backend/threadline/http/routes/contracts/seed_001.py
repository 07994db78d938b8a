"""Seed 001's chat API: `POST /api/general_chat/stream` (the path of its `routers/general_chat.py`).

The request is `{message, conversation_id?}`; the answer streams as the document's typed events, tool
markers and suggestions included (wires/seed_001.py). It is the same conversation as on
every other wire: `/api/load_conversation` or `GET /api/conversations/{id}` read it back, and
`/api/cancel_stream` stops it (the stream then ends with `cancelled`).
"""

from __future__ import annotations

import msgspec

from threadline.http.routes.contracts.common import Contract, contract_route, plain_start
from threadline.http.schemas import Id
from threadline.wires.registry import SEED_001
from threadline.wires.seed_001 import AnySeed001Event


class GeneralChatRequest(msgspec.Struct):
    message: str
    conversation_id: Id | None = None


general_chat_stream = contract_route(
    Contract(
        path="/api/general_chat/stream",
        body=GeneralChatRequest,
        start=plain_start("events"),  # events mode: for the statuses and the tools' progress
        wire=lambda _services: SEED_001,
        events=AnySeed001Event,
        statuses=(400, 404, 409, 413, 429, 500, 503),
        summary="Seed 001: send a message, the answer streams back as its typed events, with tool markers",
    ),
    "general_chat_stream",
)
