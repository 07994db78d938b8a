"""One answer's trace: its model calls, tool calls, warnings and outcome, in order, with their timings.

A `TraceRecorder` watches the answer's canonical events (first output, tool inputs and results,
warnings) and hears from the graph and the MCP client what the events do not carry (a model call's
input size, usage and duration; a tool call's server and duration). It only appends to lists while the
answer runs; the `Trace` is built once, after the answer has ended, so tracing adds nothing before the
first token. Texts are capped at `MAX_TEXT` characters so one huge tool result cannot bloat a trace.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from langchain_core.messages import AIMessage, BaseMessage

from threadline import events as ev
from threadline.storage.trace_document import (
    AnyTraceEvent,
    ModelCall,
    Status,
    ToolCall,
    Trace,
    TraceError,
    TraceWarning,
)

MAX_TEXT = 4_000
_FIRST_OUTPUT = (ev.TextDelta, ev.ReasoningDelta, ev.ToolInputStart, ev.ToolInputAvailable)
_RECORDED = {ev.ToolInputAvailable, ev.ToolOutput, ev.ToolOutputError, ev.Warning, ev.Error, ev.Finish}


def capped(value: Any) -> Any:
    """A text longer than MAX_TEXT, or a value whose JSON is, shortened with a note of its full length."""
    text = value if isinstance(value, str) else None
    if text is None:
        try:
            encoded = msgspec.json.encode(value)
        except (TypeError, msgspec.EncodeError):
            text = repr(value)
        else:
            if len(encoded) <= MAX_TEXT:
                return value
            text = encoded.decode()
    return text if len(text) <= MAX_TEXT else f"{text[:MAX_TEXT]}… [{len(text)} characters, cut]"


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TraceRecorder:
    """Collects one answer's trace while it runs; `trace()` builds the record at any moment."""

    def __init__(self, trace_id: str, conversation_id: str, message_id: str, model: str) -> None:
        self.trace_id = trace_id
        self.conversation_id = conversation_id
        self.message_id = message_id
        self.model = model
        self.started_wall = datetime.now(UTC)
        self.started = time.perf_counter()
        self.first_output: float | None = None
        self.ended: float | None = None
        self.status: Status = "running"
        self.usage = ev.Usage()
        self.error_code: str | None = None
        self.interrupted: str | None = None
        self.events: list[AnyTraceEvent] = []
        self.tools: dict[str, ToolCall] = {}

    def _when(self, moment: float) -> tuple[str, float]:
        offset = moment - self.started
        return _iso(self.started_wall + timedelta(seconds=offset)), round(offset * 1000, 2)

    def observe(self, event: ev.Event) -> None:
        """Every canonical event of the answer passes here, as the client receives it: most are text deltas,
        which cost one set lookup once the first output is seen."""
        if self.first_output is None:
            if isinstance(event, _FIRST_OUTPUT):
                self.first_output = time.perf_counter()
        elif type(event) not in _RECORDED:
            return
        match event:
            case ev.ToolInputAvailable():
                at, offset = self._when(time.perf_counter())
                step = ToolCall(
                    at=at,
                    offset_ms=offset,
                    tool_call_id=event.tool_call_id,
                    tool=event.tool_name,
                    arguments=capped(event.input),
                )
                self.tools[event.tool_call_id] = step
                self.events.append(step)
            case ev.ToolOutput() | ev.ToolOutputError():
                if called := self.tools.get(event.tool_call_id):
                    if isinstance(event, ev.ToolOutput):
                        called.result = capped(event.output)
                    else:
                        called.error = capped(event.error_text)
                    if called.duration_ms is None:  # not an MCP call (an unknown tool): until its result arrived
                        called.duration_ms = round(self._when(time.perf_counter())[1] - called.offset_ms, 2)
            case ev.Warning():
                at, offset = self._when(time.perf_counter())
                self.events.append(TraceWarning(at=at, offset_ms=offset, code=event.code, message=event.message))
            case ev.Error():
                at, offset = self._when(time.perf_counter())
                self.events.append(TraceError(at=at, offset_ms=offset, code=event.code, message=event.message))
                self.error_code = event.code
            case ev.Finish():
                self.usage = event.usage

    def model_called(
        self, started: float, messages: list[BaseMessage], response: AIMessage | None, error: BaseException | None
    ) -> None:
        """A model call ended (`started` is its `time.perf_counter()`); `error` when it failed or was stopped."""
        at, offset = self._when(started)
        step = ModelCall(
            at=at,
            offset_ms=offset,
            model=self.model,
            input_messages=len(messages),
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
            error=None if error is None else (type(error).__name__ + (f": {error}" if str(error) else "")),
        )
        if response is not None:
            step.model = str(response.response_metadata.get("model_name") or self.model)
            step.output = capped(str(response.text))  # its text blocks, without its reasoning (a str subclass)
            step.tool_calls = [call["name"] for call in response.tool_calls]
            usage: dict[str, Any] = dict(response.usage_metadata or {})
            step.usage = ev.Usage(
                input_tokens=usage.get("input_tokens", 0),
                output_tokens=usage.get("output_tokens", 0),
                total_tokens=usage.get("total_tokens", 0),
            )
        self.events.append(step)

    def duration_of(self, tool_call_id: str) -> float | None:
        step = self.tools.get(tool_call_id)
        return None if step is None else step.duration_ms

    def tool_called(self, tool_call_id: str, server: str, started: float) -> None:
        """An MCP tool call ended: the events give its input and result, this its server and duration."""
        if step := self.tools.get(tool_call_id):
            step.server = server
            step.duration_ms = round((time.perf_counter() - started) * 1000, 2)

    def end(self, status: Status, *, error_code: str | None = None, interrupted: str | None = None) -> None:
        self.ended = time.perf_counter()
        self.status = status
        self.error_code = error_code or self.error_code
        self.interrupted = interrupted

    def trace(self) -> Trace:
        def since_start(moment: float | None) -> float | None:
            return None if moment is None else round((moment - self.started) * 1000, 2)

        return Trace(
            trace_id=self.trace_id,
            conversation_id=self.conversation_id,
            message_id=self.message_id,
            model=self.model,
            status=self.status,
            started_at=_iso(self.started_wall),
            ended_at=None if self.ended is None else self._when(self.ended)[0],
            first_token_ms=since_start(self.first_output),
            total_ms=since_start(self.ended),
            usage=self.usage,
            error_code=self.error_code,
            interrupted=self.interrupted,
            events=list(self.events),
        )
