"""The trace document an answer leaves, as it is stored and served: its model calls, tool calls, warnings and
outcome, in order, with their timings (observability/trace.py records it while the answer runs)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from threadline import events as ev
from threadline.storage.feedback import Feedback

Status = Literal["running", "completed", "cancelled", "error", "timeout"]


class TraceEvent(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, kw_only=True):
    """One thing the answer did; `at` is when it started, `offset_ms` how long after the request."""

    at: str
    offset_ms: float


class ModelCall(TraceEvent, tag="model_call", kw_only=True):
    model: str
    input_messages: int
    duration_ms: float
    output: str = ""
    tool_calls: list[str] = []
    usage: ev.Usage = ev.Usage()
    error: str | None = None


class ToolCall(TraceEvent, tag="tool_call", kw_only=True):
    tool_call_id: str
    tool: str
    arguments: Any = None
    server: str | None = None
    duration_ms: float | None = None
    result: Any = None
    error: str | None = None


class TraceWarning(TraceEvent, tag="warning", kw_only=True):
    code: str
    message: str


class TraceError(TraceEvent, tag="error", kw_only=True):
    code: str
    message: str


AnyTraceEvent = ModelCall | ToolCall | TraceWarning | TraceError


class Trace(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    trace_id: str
    conversation_id: str
    message_id: str
    model: str
    status: Status
    started_at: str
    ended_at: str | None = None
    first_token_ms: float | None = None
    total_ms: float | None = None
    usage: ev.Usage = ev.Usage()
    error_code: str | None = None
    interrupted: str | None = None
    events: list[AnyTraceEvent] = []
    feedback: Feedback | None = None  # the person's rating, added when the trace is read
