"""Seed 002's chat stream (`POST /api/get_chat_response_stream`): `data: <json>\\n\\n` events, snake_case.

`tool_start{tool_call_id, tool_name, tool_args, timestamp}`, `tool_output{tool_call_id, output, truncated,
full_length}` (the output cut at `preview` characters), `tool_end{tool_call_id, status, duration_ms}`,
`chunk{content, conversation_id}`, `error{status, message}` (`status` the HTTP status the failure
would have had: 504 for a timeout, 429 for a provider's rate limit, 503 for a provider that failed,
500 otherwise), and `done{conversation_id, message_id, trace_id}` when the answer ended, stopped or not.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, Literal

import msgspec

from threadline import events as ev
from threadline.wires.sse import as_text, sse_events

MEDIA_TYPE = "text/event-stream"
HEADERS = {"cache-control": "no-cache", "connection": "keep-alive", "x-accel-buffering": "no"}
ERROR_STATUS = {
    "TIMEOUT": 504,
    "RATE_LIMITED": 429,
    "AI_SERVICE_UNAVAILABLE": 503,
    "NETWORK_ERROR": 503,
    "UNAUTHORIZED": 503,
}


class Seed002Event(msgspec.Struct, tag_field="type", frozen=True):
    """One event of the document's stream, snake_case; `type` is the subclass's tag (schema in /schema)."""


class ToolStart(Seed002Event, tag="tool_start", frozen=True):
    tool_call_id: str
    tool_name: str
    tool_args: Any
    timestamp: str


class ToolOutputEvent(Seed002Event, tag="tool_output", frozen=True):
    tool_call_id: str
    output: str
    truncated: bool
    full_length: int


class ToolEnd(Seed002Event, tag="tool_end", frozen=True):
    tool_call_id: str
    status: Literal["success", "error"]
    duration_ms: float | None


class Chunk(Seed002Event, tag="chunk", frozen=True):
    content: str
    conversation_id: str


class ErrorEvent(Seed002Event, tag="error", frozen=True):
    status: int
    message: str


class Done(Seed002Event, tag="done", frozen=True):
    conversation_id: str
    message_id: str
    trace_id: str


AnySeed002Event = ToolStart | ToolOutputEvent | ToolEnd | Chunk | ErrorEvent | Done


class ChatResponseEncoder:
    """One per response: chunks and `done` name the conversation and message `start` gave."""

    def __init__(self, preview: int, clock: Callable[[], str] = ev.timestamp) -> None:
        self.preview = preview
        self.clock = clock
        self.conversation_id = ""
        self.message_id = ""

    def _tool_end(
        self, event: ev.ToolOutput | ev.ToolOutputError, status: Literal["success", "error"], output: str
    ) -> list[Seed002Event]:
        call_id = event.tool_call_id
        return [
            ToolOutputEvent(call_id, output[: self.preview], len(output) > self.preview, len(output)),
            ToolEnd(call_id, status, event.duration_ms),
        ]

    def payloads(self, event: ev.Event) -> list[Seed002Event]:
        match event:
            case ev.TextDelta(delta=delta):
                return [Chunk(delta, self.conversation_id)]
            case ev.Start():
                self.conversation_id, self.message_id = event.conversation_id, event.message_id
            case ev.ToolInputAvailable():
                return [ToolStart(event.tool_call_id, event.tool_name, event.input, self.clock())]
            case ev.ToolOutput():
                return self._tool_end(event, "success", as_text(event.output))
            case ev.ToolOutputError():
                return self._tool_end(event, "error", event.error_text)
            case ev.Finish():
                return [Done(self.conversation_id, self.message_id, event.trace_id)]
            case ev.Error():
                return [ErrorEvent(ERROR_STATUS.get(event.code, 500), event.message)]
        return []

    def encode(self, batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
        return sse_events(batches, self.payloads)
