"""The AI SDK UI Message Stream (SSE), what `useChat` from `@ai-sdk/react` reads.

Most canonical events already have the chunk's shape and are encoded as they are; the few that differ
are rebuilt here. Only chunk types the client knows are sent: ours travel as `data-*` chunks.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import msgspec

from threadline import events as ev

MEDIA_TYPE = "text/event-stream"
HEADERS = {
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
DONE = b"data: [DONE]\n\n"

_encode = msgspec.json.Encoder().encode


def _frame(payload: Any) -> bytes:
    return b"data: " + _encode(payload) + b"\n\n"


def _start(event: ev.Start) -> bytes:
    metadata = {"conversationId": event.conversation_id, "model": event.model, "createdAt": event.created_at}
    return _frame({"type": "start", "messageId": event.message_id, "messageMetadata": metadata})


def _finish(event: ev.Finish) -> bytes:
    metadata = {"usage": event.usage, "finishedAt": event.finished_at}
    if event.interrupted:
        metadata["interrupted"] = event.interrupted
    return _frame({"type": "finish", "finishReason": event.finish_reason, "messageMetadata": metadata})


def _error(event: ev.Error) -> bytes:
    return _frame({"type": "error", "errorText": event.message})


def _data(name: str, event: ev.Event) -> bytes:
    return _frame({"type": f"data-{name}", "data": event, "transient": True})


_REBUILT = {
    ev.Start: _start,
    ev.Finish: _finish,
    ev.Error: _error,
    ev.ToolProgress: lambda event: _data("tool-progress", event),
    ev.Status: lambda event: _data("status", event),
    ev.Warning: lambda event: _data("warning", event),
}


def encode_event(event: ev.Event) -> bytes:
    """One SSE frame for one event; events shaped like their chunk skip the lookup's slow path."""
    rebuild = _REBUILT.get(type(event))
    return _frame(event) if rebuild is None else rebuild(event)


async def encode(events: AsyncIterable[ev.Event]) -> AsyncIterator[bytes]:
    async for event in events:
        yield encode_event(event)
    yield DONE
