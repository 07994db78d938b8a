"""An answer put together from its chunks the way `useChat` puts a `UIMessage` together."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from threadline.client import chunks as c


@dataclass
class ToolCall:
    tool_call_id: str
    tool_name: str
    state: Literal[
        "input-streaming", "input-available", "approval-requested", "output-available", "output-error", "output-denied"
    ] = "input-streaming"
    input_text: str = ""
    input: Any = None
    output: Any = None
    error_text: str | None = None
    approval_id: str | None = None  # set while the call waits for the person's approval
    approval_reason: str | None = None  # why it waits, where the agent says
    agent: str | None = None  # which of a team's agents called it (providerMetadata.threadline.agent)


@dataclass
class Answer:
    """An assistant message put together from its chunks, as `useChat` does."""

    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    parts: list[dict[str, Any] | ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    error: str | None = None
    suggestions: dict[str, Any] | None = None  # {"values": [{label, value}], "actions": [{label, action, …}]}

    @property
    def text(self) -> str:
        return "".join(part["text"] for part in self.parts if isinstance(part, dict) and part["type"] == "text")

    @property
    def reasoning(self) -> str:
        return "".join(part["text"] for part in self.parts if isinstance(part, dict) and part["type"] == "reasoning")

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [part for part in self.parts if isinstance(part, ToolCall)]

    @property
    def open_calls(self) -> list[ToolCall]:
        """The calls the answer ended on that wait for the program to run them: of its own tools (`AgentOptions`'s
        `tools`); give their outputs with `Client.send_outputs`."""
        return [call for call in self.tool_calls if call.state == "input-available"] if self.finish_reason else []

    @property
    def question(self) -> dict[str, Any] | None:
        """What the agent asks the person (`{"id", "value"}`) when the answer ends with its question; answer it
        with `Client.reply`."""
        last = self.parts[-1] if self.parts else None
        return last["data"] if isinstance(last, dict) and last["type"] == "data-interrupt" else None

    @property
    def conversation_id(self) -> str | None:
        return self.metadata.get("conversationId")

    def _tool(self, tool_call_id: str) -> ToolCall:
        return next(call for call in self.tool_calls if call.tool_call_id == tool_call_id)

    def _called(self, tool_call_id: str, tool_name: str) -> ToolCall:
        """The call with this id; a part of its own when its input arrives whole (no `tool-input-start`)."""
        if not any(call.tool_call_id == tool_call_id for call in self.tool_calls):
            self.parts.append(ToolCall(tool_call_id, tool_name))
        return self._tool(tool_call_id)

    def _open(self, kind: str, part_id: str) -> None:
        self.parts.append({"type": kind, "id": part_id, "text": ""})

    def _append(self, kind: str, part_id: str, delta: str) -> None:
        part = next(
            part
            for part in reversed(self.parts)
            if isinstance(part, dict) and part["type"] == kind and part["id"] == part_id
        )
        part["text"] += delta

    def apply(self, chunk: c.Chunk) -> None:  # noqa: C901 - one case per chunk type, as useChat's reader
        match chunk:
            case c.StartChunk():
                self.id = chunk.message_id or self.id
                self.metadata |= chunk.message_metadata
            case c.TextStartChunk():
                self._open("text", chunk.id)
                if agent := _agent(chunk.provider_metadata):  # a speaker known as it starts
                    self._said_by("text", chunk.id, agent)
            case c.TextDelta():
                self._append("text", chunk.id, chunk.delta)
            case c.TextEndChunk() | c.ReasoningEndChunk() if agent := _agent(chunk.provider_metadata):
                self._said_by("text" if isinstance(chunk, c.TextEndChunk) else "reasoning", chunk.id, agent)
            case c.ReasoningStart():
                self._open("reasoning", chunk.id)
            case c.ReasoningDelta():
                self._append("reasoning", chunk.id, chunk.delta)
            case c.ToolInputStart():
                self.parts.append(ToolCall(chunk.tool_call_id, chunk.tool_name))
            case c.ToolInputDelta():
                self._tool(chunk.tool_call_id).input_text += chunk.input_text_delta
            case c.ToolInputAvailableChunk():
                call = self._called(chunk.tool_call_id, chunk.tool_name)
                call.state, call.input, call.agent = "input-available", chunk.input, _agent(chunk.provider_metadata)
            case c.ToolOutputAvailableChunk():
                call = self._tool(chunk.tool_call_id)
                call.state, call.output = "output-available", chunk.output
            case c.ToolOutputErrorChunk():
                call = self._tool(chunk.tool_call_id)
                call.state, call.error_text = "output-error", chunk.error_text
            case c.ToolApprovalRequest():
                call = self._tool(chunk.tool_call_id)
                call.state, call.approval_id = "approval-requested", chunk.approval_id
            case c.ToolOutputDeniedChunk():
                self._tool(chunk.tool_call_id).state = "output-denied"
            case c.ToolInputErrorChunk():
                call = self._called(chunk.tool_call_id, chunk.tool_name)
                call.state, call.input, call.error_text = "output-error", chunk.input, chunk.error_text
            case c.MessageMetadataChunk():
                self.metadata |= chunk.message_metadata
            case c.FinishChunk():
                self.finish_reason = chunk.finish_reason
                self.metadata |= chunk.message_metadata
            case c.ErrorChunk():
                self.error = chunk.error_text
            case c.File() | c.SourceUrl():  # a file or source a tool produced, kept as useChat keeps it
                self.parts.append(msgspec.to_builtins(chunk))
            case c.DataChunk():
                self._data(chunk)

    def _said_by(self, kind: str, part_id: str, agent: str) -> None:
        """A text or reasoning part a named agent said (`part["agent"]`)."""
        for part in reversed(self.parts):
            if isinstance(part, dict) and part["type"] == kind and part["id"] == part_id:
                part["agent"] = agent
                return

    def _data(self, chunk: c.DataChunk) -> None:
        if chunk.name == "suggestions":
            self.suggestions = chunk.data
            return
        if chunk.name == "approval" and isinstance(chunk.data, dict):  # why a call waits, and its decisions
            self._tool(chunk.data["toolCallId"]).approval_reason = chunk.data.get("reason")
        if not chunk.transient and chunk.name not in _NOT_KEPT:  # the agent's own, kept like useChat's
            self._keep_data(chunk)

    def _keep_data(self, chunk: c.DataChunk) -> None:
        """A data part joins the message; one with the id of an earlier part of its kind replaces it."""
        part = {"type": f"data-{chunk.name}", "id": chunk.id, "data": chunk.data}
        for index, earlier in enumerate(self.parts):
            if (
                chunk.id
                and isinstance(earlier, dict)
                and (earlier["type"], earlier.get("id")) == (part["type"], chunk.id)
            ):
                self.parts[index] = part
                return
        self.parts.append(part)


_NOT_KEPT = frozenset({"status", "warning", "tool-progress"})  # shown while an answer streams, never kept


@dataclass(frozen=True)
class Compared:
    """An A/B comparison's two answers; `b` is empty when its stream was already read elsewhere."""

    comparison_id: str
    a: Answer
    b: Answer


def _agent(metadata: dict[str, Any] | None) -> str | None:
    """Which of a team's agents produced a part, from its providerMetadata (docs/guides/agents.md#who-spoke)."""
    said = (metadata or {}).get("threadline")
    return said.get("agent") if isinstance(said, dict) and isinstance(said.get("agent"), str) else None
