"""Seed 002's chat stream (`POST /api/get_chat_response_stream`): `data: <json>\\n\\n` events, snake_case.

`tool_start{tool_call_id, tool_name, tool_args, timestamp}`, `tool_output{tool_call_id, output, truncated,
full_length}` (the output cut at `preview` characters), `tool_end{tool_call_id, status, duration_ms}`,
`chunk{content, conversation_id}`, `error{status, message}` (`status` the HTTP status the failure
would have had: 504 for a timeout, 429 for a provider's rate limit, 503 for a provider that failed,
500 otherwise), and `done{conversation_id, message_id, trace_id}` when the answer ended, stopped or not.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

import msgspec

from threadline import events as ev

MEDIA_TYPE = "text/event-stream"
HEADERS = {"cache-control": "no-cache", "connection": "keep-alive", "x-accel-buffering": "no"}
ERROR_STATUS = {
    "TIMEOUT": 504,
    "RATE_LIMITED": 429,
    "AI_SERVICE_UNAVAILABLE": 503,
    "NETWORK_ERROR": 503,
    "UNAUTHORIZED": 503,
}

_encode = msgspec.json.Encoder().encode


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _encode(value).decode()


class ChatResponseEncoder:
    """One per response: chunks and `done` name the conversation and message `start` gave."""

    def __init__(self, preview: int, clock: Callable[[], str] = ev.timestamp) -> None:
        self.preview = preview
        self.clock = clock
        self.conversation_id = ""
        self.message_id = ""

    def _tool_end(self, event: ev.ToolOutput | ev.ToolOutputError, status: str, output: str) -> list[dict[str, Any]]:
        return [
            {
                "type": "tool_output",
                "tool_call_id": event.tool_call_id,
                "output": output[: self.preview],
                "truncated": len(output) > self.preview,
                "full_length": len(output),
            },
            {
                "type": "tool_end",
                "tool_call_id": event.tool_call_id,
                "status": status,
                "duration_ms": event.duration_ms,
            },
        ]

    def payloads(self, event: ev.Event) -> list[dict[str, Any]]:
        match event:
            case ev.TextDelta(delta=delta):
                return [{"type": "chunk", "content": delta, "conversation_id": self.conversation_id}]
            case ev.Start():
                self.conversation_id, self.message_id = event.conversation_id, event.message_id
            case ev.ToolInputAvailable():
                return [
                    {
                        "type": "tool_start",
                        "tool_call_id": event.tool_call_id,
                        "tool_name": event.tool_name,
                        "tool_args": event.input,
                        "timestamp": self.clock(),
                    }
                ]
            case ev.ToolOutput():
                return self._tool_end(event, "success", _text(event.output))
            case ev.ToolOutputError():
                return self._tool_end(event, "error", event.error_text)
            case ev.Finish():
                ids = {"conversation_id": self.conversation_id, "message_id": self.message_id}
                return [{"type": "done", **ids, "trace_id": event.trace_id}]
            case ev.Error():
                return [{"type": "error", "status": ERROR_STATUS.get(event.code, 500), "message": event.message}]
        return []

    async def encode(self, batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
        async for batch in batches:
            payloads = [payload for event in batch for payload in self.payloads(event)]
            if payloads:
                yield b"".join([b"data: " + _encode(payload) + b"\n\n" for payload in payloads])
