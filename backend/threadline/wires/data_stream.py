"""The AI SDK 4 data stream (`CODE:JSON` lines), what ai@4's `useChat` and `LangChainAdapter` apps read.

Unlike ai@4's own LangChain adapter, tool calls and their results are kept: `b`/`c` while arguments
stream, `9` when complete, `a` with the result (a failed call's result is `{"error": text}`, since
the format has no tool-error part). Our status, warning and progress events go out as `2` data, and the
answer's suggestions as an `8` message annotation.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

import msgspec

from threadline import events as ev
from threadline.wires.ui_message_stream import start_metadata, suggestions_data

MEDIA_TYPE = "text/plain; charset=utf-8"
HEADERS = {"x-vercel-ai-data-stream": "v1", "cache-control": "no-cache", "x-accel-buffering": "no"}

_encode = msgspec.json.Encoder().encode


def _line(code: bytes, payload: Any) -> bytes:
    return code + b":" + _encode(payload) + b"\n"


def _usage(usage: ev.Usage) -> dict[str, int]:
    return {"promptTokens": usage.input_tokens, "completionTokens": usage.output_tokens}


class DataStreamEncoder:
    """One per response: a step's finish reason depends on whether the step called tools."""

    def __init__(self) -> None:
        self.message_id = ""
        self.step_called_tools = False

    def encode(self, event: ev.Event) -> bytes:
        if (line := _STATELESS.get(type(event))) is not None:
            return line(event)
        match event:
            case ev.TextDelta(delta=delta):
                return _line(b"0", delta)
            case ev.ReasoningDelta(delta=delta):
                return _line(b"g", delta)
            case ev.Start():
                self.message_id = event.message_id
                return _line(b"8", [start_metadata(event)])
            case ev.StepStart():
                self.step_called_tools = False
                return _line(b"f", {"messageId": self.message_id})
            case ev.StepFinish():
                reason = "tool-calls" if self.step_called_tools else "stop"
                return _line(b"e", {"finishReason": reason, "isContinued": False})
            case ev.ToolInputStart():
                return _line(b"b", {"toolCallId": event.tool_call_id, "toolName": event.tool_name})
            case ev.ToolInputDelta():
                return _line(b"c", {"toolCallId": event.tool_call_id, "argsTextDelta": event.input_text_delta})
            case ev.ToolInputAvailable():
                self.step_called_tools = True
                return _line(b"9", {"toolCallId": event.tool_call_id, "toolName": event.tool_name, "args": event.input})
            case ev.ToolOutput():
                return _line(b"a", {"toolCallId": event.tool_call_id, "result": event.output})
            case ev.ToolOutputError():
                return _line(b"a", {"toolCallId": event.tool_call_id, "result": {"error": event.error_text}})
            case ev.Finish():
                return _line(b"d", {"finishReason": event.finish_reason, "usage": _usage(event.usage)})
            case ev.Error():
                return _line(b"3", event.message)
            case ev.Status() | ev.Warning() | ev.Title() | ev.ToolProgress() | ev.ToolApprovalRequest() | ev.Data():
                return _line(b"2", [msgspec.to_builtins(event)])
        # text-start/end and reasoning-start/end have no counterpart, nor a file by URL (ai@4's file part
        # carries the bytes themselves)
        return b""


def _source(event: ev.SourceUrl) -> bytes:
    return _line(b"h", {"sourceType": "url", "id": event.source_id, "url": event.url, "title": event.title})


def _suggestions(event: ev.Suggestions) -> bytes:
    return _line(b"8", [{"suggestions": suggestions_data(event)}])


# Events whose line depends on nothing before them.
_STATELESS: dict[type[ev.Event], Callable[[Any], bytes]] = {ev.SourceUrl: _source, ev.Suggestions: _suggestions}


async def encode(batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
    encoder = DataStreamEncoder()
    async for batch in batches:
        if lines := b"".join([encoder.encode(event) for event in batch]):
            yield lines
