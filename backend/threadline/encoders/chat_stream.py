"""Seed 004's chat stream (`POST /api/chat/stream`): `data: <json>\\n\\n` events, exactly the document's.

`message_start`, `text_delta`, `tool_call`, `tool_result`, `message_end` and `error`, and nothing else:
reasoning, statuses, warnings and progress are not part of this contract, so they are left out rather
than sent as types its clients do not know. A failed tool's result is `{"error": text}` (the contract
has no tool error). Error codes are the document's six; ours map onto them.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import msgspec

from threadline import events as ev

MEDIA_TYPE = "text/event-stream"
HEADERS = {"cache-control": "no-cache", "connection": "keep-alive", "x-accel-buffering": "no"}

# Our failure codes as the document's: AI_SERVICE_UNAVAILABLE, DATABASE_ERROR, VALIDATION_ERROR,
# RATE_LIMITED, TIMEOUT, INTERNAL_ERROR.
ERROR_CODES = {
    "TIMEOUT": "TIMEOUT",
    "RATE_LIMITED": "RATE_LIMITED",
    "AI_SERVICE_UNAVAILABLE": "AI_SERVICE_UNAVAILABLE",
    "NETWORK_ERROR": "AI_SERVICE_UNAVAILABLE",
    "UNAUTHORIZED": "AI_SERVICE_UNAVAILABLE",
    "DATABASE_UNAVAILABLE": "DATABASE_ERROR",
    "VALIDATION_ERROR": "VALIDATION_ERROR",
}

_encode = msgspec.json.Encoder().encode


def _payload(event: ev.Event) -> dict[str, Any] | None:
    match event:
        case ev.TextDelta(delta=delta):
            return {"type": "text_delta", "content": delta}
        case ev.Start():
            return {"type": "message_start", "messageId": event.message_id, "conversationId": event.conversation_id}
        case ev.ToolInputAvailable():
            return {"type": "tool_call", "id": event.tool_call_id, "name": event.tool_name, "input": event.input}
        case ev.ToolOutput():
            return {"type": "tool_result", "toolCallId": event.tool_call_id, "result": event.output}
        case ev.ToolOutputError():
            return {"type": "tool_result", "toolCallId": event.tool_call_id, "result": {"error": event.error_text}}
        case ev.Finish(usage=usage):
            return {
                "type": "message_end",
                "usage": {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens},
            }
        case ev.Error():
            code = ERROR_CODES.get(event.code, "INTERNAL_ERROR")
            return {"type": "error", "code": code, "message": event.message, "retryable": event.retryable}
    return None


def encode_event(event: ev.Event) -> bytes:
    payload = _payload(event)
    return b"" if payload is None else b"data: " + _encode(payload) + b"\n\n"


async def encode(batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
    async for batch in batches:
        if data := b"".join([encode_event(event) for event in batch]):
            yield data
