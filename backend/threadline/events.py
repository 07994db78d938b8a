"""The canonical event stream of one answer: what the graph run yields and every wire encoder reads.

Tags and field names follow the AI SDK UI Message Stream where a chunk of that protocol exists, so
the richest wire can encode most events as they are; nothing here knows LangGraph or a wire format.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import msgspec


class Event(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, frozen=True):
    """Base of the tagged union; `type` on the wire comes from each subclass's tag."""


class Start(Event, tag="start", frozen=True):
    message_id: str
    conversation_id: str
    model: str
    created_at: str
    trace_id: str = ""
    profile: str = ""  # the model profile's id
    comparison_id: str = ""  # one of an A/B comparison's two answers (storage/comparisons.py)


class StepStart(Event, tag="start-step", frozen=True):
    pass


class StepFinish(Event, tag="finish-step", frozen=True):
    pass


class TextStart(Event, tag="text-start", frozen=True):
    id: str
    agent: str = ""  # which named agent speaks, where its run says so as it starts (LangChain's lc_agent_name)


class TextDelta(Event, tag="text-delta", frozen=True):
    id: str
    delta: str


class TextEnd(Event, tag="text-end", frozen=True):
    id: str
    agent: str = ""  # which of a team's agents said it (its AIMessage.name), where it has a name


class ReasoningStart(Event, tag="reasoning-start", frozen=True):
    id: str


class ReasoningDelta(Event, tag="reasoning-delta", frozen=True):
    id: str
    delta: str


class ReasoningEnd(Event, tag="reasoning-end", frozen=True):
    id: str
    agent: str = ""


class ToolInputStart(Event, tag="tool-input-start", frozen=True):
    tool_call_id: str
    tool_name: str
    title: str = ""  # the MCP tool's title, when it has one


class ToolInputDelta(Event, tag="tool-input-delta", frozen=True):
    tool_call_id: str
    input_text_delta: str


class ToolInputAvailable(Event, tag="tool-input-available", frozen=True):
    tool_call_id: str
    tool_name: str
    input: Any
    title: str = ""
    agent: str = ""  # which of a team's agents called it


class ToolInputError(Event, tag="tool-input-error", frozen=True):
    """The model called a tool that does not exist, or with input that is not valid for it."""

    tool_call_id: str
    tool_name: str
    input: Any
    error_text: str
    agent: str = ""


class ToolOutput(Event, tag="tool-output-available", frozen=True):
    tool_call_id: str
    output: Any
    duration_ms: float | None = None  # how long the call ran, when known (seed 002's tool_end)


class ToolOutputError(Event, tag="tool-output-error", frozen=True):
    tool_call_id: str
    error_text: str
    duration_ms: float | None = None


class ToolOutputDenied(ToolOutputError, tag="tool-output-denied", frozen=True):
    """The person declined the call, so it never ran; a wire with no word for that shows it as an error."""


class File(Event, tag="file", frozen=True):
    """A file a tool produced (an MCP image or blob resource), stored like an upload: the AI SDK's `file` part."""

    url: str
    media_type: str


class SourceUrl(Event, tag="source-url", frozen=True):
    """A source a tool pointed to (an MCP resource link): the AI SDK's `source-url` part."""

    source_id: str
    url: str
    title: str | None = None


class ToolApprovalRequest(Event, tag="tool-approval-request", frozen=True):
    """The call waits for the person's approval: the answer ends here, and resumes when they respond."""

    approval_id: str
    tool_call_id: str


class MessageMetadata(Event, tag="message-metadata", frozen=True):
    """Metadata that changes while the answer streams: the tokens used so far, after each model call."""

    usage: Usage


class ToolProgress(Event, tag="tool-progress", frozen=True):
    tool_call_id: str
    progress: float
    total: float | None = None
    message: str | None = None


class Status(Event, tag="status", frozen=True):
    text: str


class Warning(Event, tag="warning", frozen=True):
    code: str
    message: str


class Title(Event, tag="title", frozen=True):
    """The conversation's title, written by its model after the first answer (agent/titles.py)."""

    title: str


class SuggestedValue(msgspec.Struct, frozen=True):
    """A reply the person might send next: `label` on the chip, `value` the message it sends."""

    label: str
    value: str


class SuggestedAction(msgspec.Struct, frozen=True):
    """A button: a registered action (agent/actions.py) run by the page (`client`) or by POST /api/actions
    (`server`)."""

    label: str
    action: str
    handler: Literal["client", "server"]
    style: Literal["primary", "secondary", "warning"] = "secondary"
    data: dict[str, Any] | None = None


class Suggestions(Event, tag="suggestions", frozen=True):
    """What the answer suggests doing next; sent once, after its text, and kept with the answer."""

    values: tuple[SuggestedValue, ...] = ()
    actions: tuple[SuggestedAction, ...] = ()


class Data(Event, tag="data", frozen=True):
    """What an agent sends with `get_stream_writer()` (the agents guide says how): an AI SDK `data-{name}` part.
    `interrupt` is the agent's question to the person (`interrupt(value)`), answered by the next request."""

    name: str
    data: Any
    id: str = ""  # a part with the id of an earlier one replaces it
    transient: bool = False  # shown while the answer streams, not kept in the message


class Usage(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0


class Finish(Event, tag="finish", frozen=True):
    finish_reason: str
    finished_at: str
    usage: Usage = Usage()
    interrupted: str | None = None  # why the answer stopped early: cancelled, client-disconnected
    trace_id: str = ""  # where GET /api/trace/{id} finds what this answer did
    model: str = ""  # the models a hosted agent called, when they are not the profile's (Start's model)


class Error(Event, tag="error", frozen=True):
    code: str
    message: str
    retryable: bool = False


AnyEvent = (  # every event, so a recorded answer (answers/recordings.py) reads back as the events it was
    Start
    | StepStart
    | StepFinish
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
    | ToolOutput
    | ToolOutputError
    | ToolOutputDenied
    | File
    | SourceUrl
    | ToolApprovalRequest
    | MessageMetadata
    | ToolProgress
    | Status
    | Warning
    | Title
    | Suggestions
    | Data
    | Finish
    | Error
)


def plain(value: Any) -> Any:
    """A value an agent produced, as JSON the wires can send; what has no JSON form is sent as its text."""
    try:
        return msgspec.to_builtins(value, str_keys=True, enc_hook=_pydantic)
    except (TypeError, ValueError):
        return str(value)


def _pydantic(value: Any) -> Any:
    """A Pydantic model (`create_agent(response_format=Model)`, a tool's result) as its JSON form, not its repr;
    found by its method, so this module needs no Pydantic."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    raise TypeError(f"{type(value).__name__} has no JSON form")


def timestamp() -> str:
    """Now in UTC as the ISO 8601 string JavaScript's Date parses and produces (millisecond precision)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
