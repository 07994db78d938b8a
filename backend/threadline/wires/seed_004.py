"""Seed 004's chat stream (`POST /api/chat/stream`): `data: <json>\\n\\n` events, exactly the document's.

`message_start`, `text_delta`, `tool_call`, `tool_result`, `message_end` and `error`, and nothing else:
reasoning, statuses, warnings and progress are not part of this contract, so they are left out rather
than sent as types its clients do not know. A failed tool's result is `{"error": text}` (the contract
has no tool error). Error codes are the document's six; ours map onto them.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Literal

import msgspec

from threadline import events as ev

MEDIA_TYPE = "text/event-stream"
HEADERS = {"cache-control": "no-cache", "connection": "keep-alive", "x-accel-buffering": "no"}

ErrorCode = Literal[
    "AI_SERVICE_UNAVAILABLE", "DATABASE_ERROR", "VALIDATION_ERROR", "RATE_LIMITED", "TIMEOUT", "INTERNAL_ERROR"
]
# Our failure codes as the document's; any other is INTERNAL_ERROR.
ERROR_CODES: dict[str, ErrorCode] = {
    "TIMEOUT": "TIMEOUT",
    "RATE_LIMITED": "RATE_LIMITED",
    "AI_SERVICE_UNAVAILABLE": "AI_SERVICE_UNAVAILABLE",
    "NETWORK_ERROR": "AI_SERVICE_UNAVAILABLE",
    "UNAUTHORIZED": "AI_SERVICE_UNAVAILABLE",
    "DATABASE_UNAVAILABLE": "DATABASE_ERROR",
    "VALIDATION_ERROR": "VALIDATION_ERROR",
}

_encode = msgspec.json.Encoder().encode


class Seed004Event(msgspec.Struct, tag_field="type", rename="camel", frozen=True):
    """One event of the document's stream; `type` is the subclass's tag (its schema is in /schema)."""


class MessageStart(Seed004Event, tag="message_start", frozen=True):
    message_id: str
    conversation_id: str


class TextDelta(Seed004Event, tag="text_delta", frozen=True):
    content: str


class ToolCall(Seed004Event, tag="tool_call", frozen=True):
    id: str
    name: str
    input: Any


class ToolResult(Seed004Event, tag="tool_result", frozen=True):
    tool_call_id: str
    result: Any


class TokenUsage(msgspec.Struct, rename="camel", frozen=True):
    input_tokens: int
    output_tokens: int


class MessageEnd(Seed004Event, tag="message_end", frozen=True):
    usage: TokenUsage


class ErrorEvent(Seed004Event, tag="error", frozen=True):
    code: ErrorCode
    message: str
    retryable: bool


AnySeed004Event = MessageStart | TextDelta | ToolCall | ToolResult | MessageEnd | ErrorEvent


def _payload(event: ev.Event) -> Seed004Event | None:
    match event:
        case ev.TextDelta(delta=delta):
            return TextDelta(content=delta)
        case ev.Start():
            return MessageStart(message_id=event.message_id, conversation_id=event.conversation_id)
        case ev.ToolInputAvailable():
            return ToolCall(id=event.tool_call_id, name=event.tool_name, input=event.input)
        case ev.ToolOutput():
            return ToolResult(tool_call_id=event.tool_call_id, result=event.output)
        case ev.ToolOutputError():
            return ToolResult(tool_call_id=event.tool_call_id, result={"error": event.error_text})
        case ev.Finish(usage=usage):
            return MessageEnd(usage=TokenUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens))
        case ev.Error():
            code = ERROR_CODES.get(event.code, "INTERNAL_ERROR")
            return ErrorEvent(code=code, message=event.message, retryable=event.retryable)
    return None


def encode_event(event: ev.Event) -> bytes:
    payload = _payload(event)
    return b"" if payload is None else b"data: " + _encode(payload) + b"\n\n"


async def encode(batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
    async for batch in batches:
        if data := b"".join([encode_event(event) for event in batch]):
            yield data
