"""Seed 004's `POST /api/chat/stream`: `{conversationId?, message}` in, its SSE events out (wires/seed_004.py).

The same conversations, history, tools, stops and traces as `/api/chat`; what differs is the
document's: UUID ids, its validation messages, every failure after the request is accepted sent as an
`error` event on a 200 stream, no assistant message kept when the answer fails (the user can retry),
and its limits: `CHAT_STREAM_RATE_LIMIT` requests per visitor on top of `CHAT_RATE_LIMIT` per address,
and one stream at a time per visitor, both answered 429 with Retry-After.
"""

from __future__ import annotations

import re
import uuid

from threadline.answers.options import AnswerOptions, NewMessage
from threadline.answers.turn import Turn
from threadline.http.dependencies import ChatAllowance
from threadline.http.errors import ApiError
from threadline.http.messages import empty_message, storable
from threadline.http.routes.contracts.common import Contract, contract_route
from threadline.http.schemas import MAX_MESSAGE_CHARS, ChatStreamRequest, ErrorDetail
from threadline.refusals import Refused
from threadline.runtime import Services
from threadline.wires.registry import SEED_004
from threadline.wires.seed_004 import AnySeed004Event

UUID_PATTERN = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
ONE_STREAM_RETRY_AFTER = 1  # seconds: the running answer may end any moment


def _invalid(field: str, message: str, detail: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", message, [ErrorDetail(field, detail)])


def _message(data: ChatStreamRequest) -> str:
    text = data.message.strip()
    if not text:
        raise empty_message("message")
    if len(text) > MAX_MESSAGE_CHARS:
        too_long = f"Message must be at most {MAX_MESSAGE_CHARS} characters"
        raise _invalid("message", too_long, too_long)
    return storable(text, "message")


def _conversation_id(data: ChatStreamRequest) -> str | None:
    """The conversation's UUID in its canonical lower case: UUIDs are case-insensitive."""
    if data.conversation_id is None:
        return None
    if not UUID_PATTERN.fullmatch(data.conversation_id):
        raise _invalid("conversationId", "conversationId must be a valid UUID", "Must be a valid UUID")
    return data.conversation_id.lower()


async def start(
    services: Services, client_id: str, allowance: ChatAllowance, data: ChatStreamRequest
) -> tuple[str, Turn]:
    """Its own checks and ids (UUIDs), its per-visitor limit on top of the chat's, and one stream at a time."""
    text, conversation_id = _message(data), _conversation_id(data)
    await allowance.spend()
    await allowance.limits.chat_stream_per_visitor.check(client_id)
    if conversation_id is not None:
        await services.answers.owned(client_id, conversation_id)
    conversation_id = conversation_id or str(uuid.uuid4())
    message = NewMessage(text, str(uuid.uuid4()), str(uuid.uuid4()))
    # Seed 004 has no approvals (a call that needs one is declined) and keeps no failed answer.
    options = AnswerOptions(interactive=False, keep_failed_answer=False, at_once=1)  # one stream per client
    try:
        return conversation_id, await services.answers.start(client_id, conversation_id, message, options)
    except Refused as refused:
        if refused.code != "CONFLICT":
            raise
        raise Refused(
            "RATE_LIMITED",
            "You already have a response streaming: one at a time. Wait for it to finish, or stop it.",
            retry_after=ONE_STREAM_RETRY_AFTER,
        ) from None


chat_stream_route = contract_route(
    Contract(
        path="/api/chat/stream",
        body=ChatStreamRequest,
        start=start,
        wire=lambda _services: SEED_004,
        events=AnySeed004Event,
        statuses=(400, 404, 413, 429, 500, 503),
        summary="Seed 004: send a message, the answer streams back as its SSE events",
    ),
    "chat_stream_route",
)
