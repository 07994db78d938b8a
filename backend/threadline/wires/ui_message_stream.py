"""The AI SDK UI Message Stream, what `useChat` from `@ai-sdk/react` reads: one JSON chunk per event.

Most canonical events already have the chunk's shape and are encoded as they are; the few that differ
are rebuilt as their chunk (ui_chunks.py, which the Python client reads too). Only chunk types the
client knows are sent: ours travel as `data-*` chunks. The same chunks go out as SSE (`encode`) or as
NDJSON (see ndjson.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

import msgspec

from threadline import events as ev
from threadline.wires import ui_chunks as ui

MEDIA_TYPE = "text/event-stream"
HEADERS = {
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
DONE = b"data: [DONE]\n\n"

_encode = msgspec.json.Encoder().encode


NOTHING_COUNTED = ev.Usage()


def start_metadata(event: ev.Start) -> dict[str, Any]:
    """What the answer's metadata says from its start (the AI SDK 4 data stream sends it as an annotation)."""
    metadata = {
        "conversationId": event.conversation_id,
        "model": event.model,
        "createdAt": event.created_at,
        "traceId": event.trace_id,
        "profile": event.profile,
    }
    if event.comparison_id:
        metadata["comparisonId"] = event.comparison_id
    return metadata


def _start(event: ev.Start) -> ui.StartChunk:
    return ui.StartChunk(event.message_id, start_metadata(event))


def _finish(event: ev.Finish) -> ui.FinishChunk:
    # An answer stopped before any model call finished has counted nothing: no usage, as its history says
    counted = {"usage": event.usage} if event.usage != NOTHING_COUNTED else {}
    metadata = counted | {"finishedAt": event.finished_at, "traceId": event.trace_id}
    if event.interrupted:
        metadata["interrupted"] = event.interrupted
    if event.model:
        metadata["model"] = event.model
    return ui.FinishChunk(event.finish_reason, metadata)


def _error(event: ev.Error) -> ui.ErrorChunk:
    return ui.ErrorChunk(event.message)


def _tool_output(event: ev.ToolOutput) -> ui.ToolOutputAvailableChunk:
    return ui.ToolOutputAvailableChunk(event.tool_call_id, event.output)


def _tool_error(event: ev.ToolOutputError) -> ui.ToolOutputErrorChunk:
    return ui.ToolOutputErrorChunk(event.tool_call_id, event.error_text)


def _tool_denied(event: ev.ToolOutputDenied) -> ui.ToolOutputDeniedChunk:
    return ui.ToolOutputDeniedChunk(event.tool_call_id)


def _metadata(event: ev.MessageMetadata) -> ui.MessageMetadataChunk:
    return ui.MessageMetadataChunk({"usage": event.usage})


def _by_agent(event: ev.TextStart | ev.TextEnd | ev.ReasoningEnd | ev.ToolInputAvailable | ev.ToolInputError) -> Any:
    """A part a named agent produced says so in its `providerMetadata` (`{"threadline": {"agent": name}}`), which
    `useChat` keeps on the part (`providerMetadata`, or `callProviderMetadata` for a tool). Without an agent the
    event already has its chunk's shape."""
    if not event.agent:
        return event
    fields = {name: getattr(event, name) for name in event.__struct_fields__ if name != "agent"}
    return _AGENT_CHUNKS[type(event)](**fields, provider_metadata=agent_metadata(event.agent))


def agent_metadata(agent: str) -> dict[str, Any]:
    return {"threadline": {"agent": agent}}


_AGENT_CHUNKS: dict[type[ev.Event], type[ui.Chunk]] = {
    ev.TextStart: ui.TextStartChunk,
    ev.TextEnd: ui.TextEndChunk,
    ev.ReasoningEnd: ui.ReasoningEndChunk,
    ev.ToolInputAvailable: ui.ToolInputAvailableChunk,
    ev.ToolInputError: ui.ToolInputErrorChunk,
}


def suggestions_data(event: ev.Suggestions) -> dict[str, Any]:
    return {"values": event.values, "actions": event.actions}


def _suggestions(event: ev.Suggestions) -> Any:
    """A persistent part (not transient): it stays in the message, as in a reloaded conversation's history."""
    return {"type": "data-suggestions", "id": "suggestions", "data": suggestions_data(event)}


def _data(name: str) -> Callable[[Any], dict[str, Any]]:
    return lambda event: {"type": f"data-{name}", "data": event, "transient": True}


def agent_data(event: ev.Data) -> dict[str, Any]:
    """An agent's data part: `data-{name}`, with its id and `transient` only when set."""
    chunk: dict[str, Any] = {"type": f"data-{event.name}", "data": event.data}
    if event.id:
        chunk["id"] = event.id
    if event.transient:
        chunk["transient"] = True
    return chunk


_REBUILT: dict[type[ev.Event], Callable[[Any], Any]] = {
    ev.Start: _start,
    ev.Finish: _finish,
    ev.Error: _error,
    ev.ToolOutput: _tool_output,  # without our duration, which the protocol has no field for
    ev.ToolOutputError: _tool_error,
    ev.ToolOutputDenied: _tool_denied,
    ev.MessageMetadata: _metadata,
    ev.ToolProgress: _data("tool-progress"),
    ev.Status: _data("status"),
    ev.Warning: _data("warning"),
    ev.Title: _data("title"),
    ev.Suggestions: _suggestions,
    ev.Data: agent_data,
    ev.TextStart: _by_agent,
    ev.TextEnd: _by_agent,
    ev.ReasoningEnd: _by_agent,
    ev.ToolInputAvailable: _by_agent,
    ev.ToolInputError: _by_agent,
}


def chunk_json(event: ev.Event) -> bytes:
    """The chunk for one event as JSON; events shaped like their chunk skip the rebuild."""
    rebuild = _REBUILT.get(type(event))
    return _encode(event if rebuild is None else rebuild(event))


def encode_event(event: ev.Event) -> bytes:
    data = chunk_json(event)
    if type(event) in _FREE_VALUES and (b'"__proto__"' in data or b'"prototype"' in data):
        data = _encode(accepted(msgspec.json.decode(data)))  # seldom: perhaps a value the client's parser refuses
    return b"data: " + data + b"\n\n"


# The events whose values are a tool's or an agent's own (a text delta is a string: nothing to look at per token).
_FREE_VALUES = frozenset({ev.ToolInputAvailable, ev.ToolInputError, ev.ToolOutput, ev.Data})


def accepted(value: Any) -> Any:
    """`value` with each object the AI SDK client's parser refuses (one with a `__proto__` key, or a `constructor`
    holding `prototype`: `secureJsonParse`, against prototype pollution) as its JSON text instead. A tool's input or
    output, or an agent's data, holding one would make the client refuse the whole chunk, and `useChat` throw."""
    if isinstance(value, dict):
        constructor = value.get("constructor")
        if "__proto__" in value or (isinstance(constructor, dict) and "prototype" in constructor):
            return _encode(value).decode()
        return {key: accepted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [accepted(item) for item in value]
    return value


async def encode(batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
    async for batch in batches:
        yield b"".join([encode_event(event) for event in batch])
    yield DONE
