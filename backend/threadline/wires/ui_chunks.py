"""The UI Message Stream's chunk types as `useChat` reads them (the `ai` package's `uiMessageChunkSchema`;
PROTOCOL.md), declared once: the encoder sends them (ui_message_stream.py) and the Python client reads them.

Where a canonical event already has its chunk's shape, the event's class is the chunk's type and is sent as
it is; the chunks whose shape differs from their event's are declared here. `data-*` chunks carry a name in
their type, so they have no class of their own on the server (the client reads them as `Data`).
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


class Start(Chunk, tag="start", frozen=True):
    message_id: str | None = None
    message_metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class Finish(Chunk, tag="finish", frozen=True):
    finish_reason: str | None = None
    message_metadata: dict[str, Any] = msgspec.field(default_factory=dict)


# A part a named agent produced says so in its providerMetadata: `{"threadline": {"agent": name}}`.
class TextStart(Chunk, tag="text-start", frozen=True):
    id: str
    provider_metadata: dict[str, Any] | None = None


class TextEnd(Chunk, tag="text-end", frozen=True):
    id: str
    provider_metadata: dict[str, Any] | None = None


class ReasoningEnd(Chunk, tag="reasoning-end", frozen=True):
    id: str
    provider_metadata: dict[str, Any] | None = None


class ToolInputAvailable(Chunk, tag="tool-input-available", frozen=True):
    tool_call_id: str
    tool_name: str
    input: Any
    title: str = ""
    provider_metadata: dict[str, Any] | None = None


class ToolInputError(Chunk, tag="tool-input-error", frozen=True):
    tool_call_id: str
    tool_name: str
    input: Any
    error_text: str
    provider_metadata: dict[str, Any] | None = None


class Error(Chunk, tag="error", frozen=True):
    error_text: str


class ToolOutputAvailable(Chunk, tag="tool-output-available", frozen=True):
    tool_call_id: str
    output: Any


class ToolOutputError(Chunk, tag="tool-output-error", frozen=True):
    tool_call_id: str
    error_text: str


class ToolOutputDenied(Chunk, tag="tool-output-denied", frozen=True):
    tool_call_id: str


class MessageMetadata(Chunk, tag="message-metadata", frozen=True):
    message_metadata: dict[str, Any] = msgspec.field(default_factory=dict)


AnyChunk = (
    Start
    | StartStep
    | FinishStep
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolInputStart
    | ToolInputDelta
    | ToolInputAvailable
    | ToolInputError
    | ToolOutputAvailable
    | ToolOutputError
    | ToolOutputDenied
    | ToolApprovalRequest
    | MessageMetadata
    | File
    | SourceUrl
    | Finish
    | Error
)

__all__ = [
    "AnyChunk",
    "Chunk",
    "Error",
    "File",
    "Finish",
    "FinishStep",
    "MessageMetadata",
    "ReasoningDelta",
    "ReasoningEnd",
    "ReasoningStart",
    "SourceUrl",
    "Start",
    "StartStep",
    "TextDelta",
    "TextEnd",
    "TextStart",
    "ToolApprovalRequest",
    "ToolInputAvailable",
    "ToolInputDelta",
    "ToolInputError",
    "ToolInputStart",
    "ToolOutputAvailable",
    "ToolOutputDenied",
    "ToolOutputError",
]
