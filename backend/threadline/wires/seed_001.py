"""Seed 001's chat stream (`POST /api/general_chat/stream`): typed SSE events, `data: <json>\\n\\n`.

`status{message}` ("Thinking..." first, then the answer's own statuses), `text_delta{text}`,
`tool_start{tool, input, tool_use_id}`, `tool_progress{tool, stage, message, progress, data}` (`progress`
0–1 when the tool says how far it is, else null), `tool_complete{tool, index}`, `complete{payload}`,
`error{message}` and `cancelled` (a stop or a disconnect).

Tool markers are this wire's alone: after each finished tool call, `[[tool:N]]` (N counting from 0 in
the answer, equal to `tool_complete.index`) is sent as a `text_delta` of its own, with the blank lines
around it as text deltas beside it, and `complete.payload` holds the
message with its markers and `custom_payload = {type: "tool_history", data: [{tool_name, input, output}]}`,
indexed by N. The stored answer has no markers: the other wires place tool parts by their position.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Literal

import msgspec

from threadline import events as ev
from threadline.wires.sse import as_text, sse_events

MEDIA_TYPE = "text/event-stream"
HEADERS = {"cache-control": "no-cache", "connection": "keep-alive", "x-accel-buffering": "no"}
THINKING = "Thinking..."  # the document's three dots, not the ellipsis the other wires show


class Seed001Event(msgspec.Struct, tag_field="type", frozen=True):
    """One event of the document's stream; `type` is the subclass's tag."""


class Status(Seed001Event, tag="status", frozen=True):
    message: str


class TextDelta(Seed001Event, tag="text_delta", frozen=True):
    text: str


class ToolStart(Seed001Event, tag="tool_start", frozen=True):
    tool: str
    input: Any
    tool_use_id: str


class ToolProgress(Seed001Event, tag="tool_progress", frozen=True):
    tool: str
    stage: str
    message: str
    progress: float | None
    data: Any


class ToolComplete(Seed001Event, tag="tool_complete", frozen=True):
    tool: str
    index: int


class ToolHistoryEntry(msgspec.Struct, frozen=True):
    tool_name: str
    input: Any
    output: str


class ToolHistory(msgspec.Struct, frozen=True):
    type: Literal["tool_history"]
    data: list[ToolHistoryEntry]


class Payload(msgspec.Struct, frozen=True, omit_defaults=True):
    message: str
    suggested_values: tuple[ev.SuggestedValue, ...] = ()
    suggested_actions: tuple[ev.SuggestedAction, ...] = ()
    custom_payload: ToolHistory | None = None


class Complete(Seed001Event, tag="complete", frozen=True):
    payload: Payload


class Error(Seed001Event, tag="error", frozen=True):
    message: str


class Cancelled(Seed001Event, tag="cancelled", frozen=True):
    pass


AnySeed001Event = Status | TextDelta | ToolStart | ToolProgress | ToolComplete | Complete | Error | Cancelled


class GeneralChatEncoder:
    """One per response: it numbers the answer's tools and collects the message the `complete` event holds."""

    def __init__(self) -> None:
        self.message: list[str] = []
        self.calls: dict[str, tuple[str, Any]] = {}  # tool call id → its tool's name and input
        self.history: list[ToolHistoryEntry] = []
        self.suggestions = ev.Suggestions()

    def _text_delta(self, text: str) -> TextDelta:
        self.message.append(text)
        return TextDelta(text)

    def _tool_done(self, tool_call_id: str, output: str) -> list[Seed001Event]:
        name, tool_input = self.calls.pop(tool_call_id, ("", None))
        index = len(self.history)
        self.history.append(ToolHistoryEntry(name, tool_input, output))
        ended_line = "".join(self.message).endswith("\n")
        before = [self._text_delta("\n\n")] if self.message and not ended_line else []
        # The marker is a text_delta of its own, exactly `[[tool:N]]`: the spacing around it is text.
        return [ToolComplete(name, index), *before, self._text_delta(f"[[tool:{index}]]"), self._text_delta("\n\n")]

    def _complete(self) -> Complete:
        return Complete(
            Payload(
                message="".join(self.message).strip(),  # as the answer is stored: without edge spaces
                suggested_values=self.suggestions.values,
                suggested_actions=self.suggestions.actions,
                custom_payload=ToolHistory("tool_history", self.history) if self.history else None,
            )
        )

    def payloads(self, event: ev.Event) -> list[Seed001Event]:
        match event:
            case ev.TextDelta(delta=delta):
                return [self._text_delta(delta)]
            case ev.Start():
                return [Status(THINKING)]
            case ev.Status(text=text):
                return [Status(text)]
            case ev.ToolInputAvailable():
                self.calls[event.tool_call_id] = (event.tool_name, event.input)
                return [ToolStart(event.tool_name, event.input, event.tool_call_id)]
            case ev.ToolInputError():  # the model's mistake: shown as a tool that failed at once
                self.calls[event.tool_call_id] = (event.tool_name, event.input)
                start = ToolStart(event.tool_name, event.input, event.tool_call_id)
                return [start, *self._tool_done(event.tool_call_id, event.error_text)]
            case ev.ToolProgress():
                name = self.calls.get(event.tool_call_id, ("", None))[0]
                share = event.progress / event.total if event.total else None
                data = {"progress": event.progress, "total": event.total}
                return [ToolProgress(name, "running", event.message or "", share, data)]
            case ev.ToolOutput():
                return self._tool_done(event.tool_call_id, as_text(event.output))
            case ev.ToolOutputError():
                return self._tool_done(event.tool_call_id, event.error_text)
            case ev.Suggestions():
                self.suggestions = event
            case ev.Finish(interrupted=interrupted):
                return [Cancelled() if interrupted else self._complete()]
            case ev.Error(message=message):
                return [Error(message)]
        return []

    def encode(self, batches: AsyncIterable[list[ev.Event]]) -> AsyncIterator[bytes]:
        return sse_events(batches, self.payloads)
