"""The UI Message Stream's chunk types as `useChat` reads them (the `ai` package's `uiMessageChunkSchema` in
`ai` 5.0, 6.0 and 7.0, the versions conformance/check-chunks.mjs checks every chunk against; PROTOCOL.md),
declared once: the encoder sends them (ui_message_stream.py) and the Python client reads them.

Where a canonical event already has its chunk's shape, the event's class is the chunk's type and is sent as
it is (`TextDelta`, `ToolInputStart`…); the chunks whose shape differs from their event's are declared here, named
`…Chunk` apart from the event they encode (`StartChunk` for `events.Start`). `data-*` chunks carry a name in
their type, so they have no class of their own on the server (the client reads them as `DataChunk`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from threadline.events import (
    Event,
    File,
    ReasoningDelta,
    ReasoningStart,
    SourceUrl,
    TextDelta,
    ToolApprovalRequest,
    ToolInputDelta,
    ToolInputStart,
)
from threadline.events import StepFinish as FinishStep
from threadline.events import StepStart as StartStep

Chunk = Event  # the tagged base: `type` on the wire is each chunk's tag


class StartChunk(Chunk, tag="start", frozen=True):
    message_id: str | None = None
    message_metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class FinishChunk(Chunk, tag="finish", frozen=True):
    finish_reason: str | None = None
    message_metadata: dict[str, Any] = msgspec.field(default_factory=dict)


# A part a named agent produced says so in its providerMetadata: `{"threadline": {"agent": name}}`.
class TextStartChunk(Chunk, tag="text-start", frozen=True):
    id: str
    provider_metadata: dict[str, Any] | None = None


class TextEndChunk(Chunk, tag="text-end", frozen=True):
    id: str
    provider_metadata: dict[str, Any] | None = None


class ReasoningEndChunk(Chunk, tag="reasoning-end", frozen=True):
    id: str
    provider_metadata: dict[str, Any] | None = None


class ToolInputAvailableChunk(Chunk, tag="tool-input-available", frozen=True):
    tool_call_id: str
    tool_name: str
    input: Any
    title: str = ""
    provider_metadata: dict[str, Any] | None = None


class ToolInputErrorChunk(Chunk, tag="tool-input-error", frozen=True):
    tool_call_id: str
    tool_name: str
    input: Any
    error_text: str
    provider_metadata: dict[str, Any] | None = None


class ErrorChunk(Chunk, tag="error", frozen=True):
    error_text: str


class ToolOutputAvailableChunk(Chunk, tag="tool-output-available", frozen=True):
    tool_call_id: str
    output: Any


class ToolOutputErrorChunk(Chunk, tag="tool-output-error", frozen=True):
    tool_call_id: str
    error_text: str


class ToolOutputDeniedChunk(Chunk, tag="tool-output-denied", frozen=True):
    tool_call_id: str


class MessageMetadataChunk(Chunk, tag="message-metadata", frozen=True):
    message_metadata: dict[str, Any] = msgspec.field(default_factory=dict)


AnyChunk = (
    StartChunk
    | StartStep
    | FinishStep
    | TextStartChunk
    | TextDelta
    | TextEndChunk
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEndChunk
    | ToolInputStart
    | ToolInputDelta
    | ToolInputAvailableChunk
    | ToolInputErrorChunk
    | ToolOutputAvailableChunk
    | ToolOutputErrorChunk
    | ToolOutputDeniedChunk
    | ToolApprovalRequest
    | MessageMetadataChunk
    | File
    | SourceUrl
    | FinishChunk
    | ErrorChunk
)

__all__ = [
    "AnyChunk",
    "Chunk",
    "ErrorChunk",
    "File",
    "FinishChunk",
    "FinishStep",
    "MessageMetadataChunk",
    "ReasoningDelta",
    "ReasoningEndChunk",
    "ReasoningStart",
    "SourceUrl",
    "StartChunk",
    "StartStep",
    "TextDelta",
    "TextEndChunk",
    "TextStartChunk",
    "ToolApprovalRequest",
    "ToolInputAvailableChunk",
    "ToolInputDelta",
    "ToolInputErrorChunk",
    "ToolInputStart",
    "ToolOutputAvailableChunk",
    "ToolOutputDeniedChunk",
    "ToolOutputErrorChunk",
]
