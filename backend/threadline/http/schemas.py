"""Request and response bodies, validated by msgspec as Litestar decodes them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from threadline.settings.answers import MultitaskStrategy, OnDisconnect, StreamMode
from threadline.settings.files import MOST_FILE_BYTES

# `(?!\n)$`: in Python's regex `$` alone also matches before a final newline, and an id ends up in headers.
ID_PATTERN = r"^[A-Za-z0-9_-]{1,128}(?!\n)$"
Id = Annotated[str, msgspec.Meta(pattern=ID_PATTERN, description="letters, digits, _ and -")]
# An agent is named as its langgraph.json names it ("Deep Researcher", "email.agent"): printable text.
AgentName = Annotated[
    str, msgspec.Meta(pattern=r"^[^\x00-\x1f\x7f]{1,128}$", description="an agent's id as GET /api/agents lists it")
]
MAX_MESSAGE_CHARS = 10_000
MAX_BODY_BYTES = 1_048_576  # 1 MB
# What a value the client chooses freely may take, as JSON: the answer to an agent's question
# (`resume.value`) and an approval's changed tool input (`editedInput`).
MAX_VALUE_BYTES = 65_536
# A message with files (as data URLs, a third larger than the files) or a file upload: the body holds the most
# files' bytes a setting allows (MOST_FILE_BYTES) in base64, and a message's 1 MB; their own limits are checked
# on the bytes.
MAX_FILES_BODY_BYTES = -(-MOST_FILE_BYTES // 3) * 4 + MAX_BODY_BYTES


class ApprovalIn(msgspec.Struct):
    """A tool part's `approval` once the person answered (`addToolApprovalResponse`)."""

    id: Annotated[str, msgspec.Meta(max_length=128)]
    approved: bool | None = None
    reason: Annotated[str, msgspec.Meta(max_length=2_000)] | None = None


class EditableApprovalIn(ApprovalIn, rename="camel"):
    """threadline's extension of the approval response (the AI SDK has none): `editedInput` approves the call
    with a changed input, where the agent allows it (HumanInTheLoopMiddleware's `edit` decision)."""

    edited_input: dict[str, Any] | None = None


class ResumeIn(msgspec.Struct, rename="camel"):
    """The person's answer to the agent's question (`interrupt(value)`, sent as a `data-interrupt` part)."""

    interrupt_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    value: Any = None


class UIMessagePart(msgspec.Struct, rename="camel"):
    """A part of a `UIMessage`. The server reads text and file parts of the new user message, and tool parts in
    `approval-responded` state of the assistant message that answers approvals, or in `output-available` and
    `output-error` state of the one that answers browser tools' calls; the rest is ignored."""

    type: str
    text: str | None = None
    media_type: str | None = None  # a file part's: its type as the client declares it (the bytes decide)
    filename: str | None = None
    url: str | None = None  # a file part's: a data URL, or /api/files/{id} for one already uploaded
    tool_call_id: str | None = None
    state: str | None = None
    approval: EditableApprovalIn | None = None
    output: Any = None  # a browser tool's output, as the page's `addToolOutput` gave it
    error_text: str | None = None  # ... or its error


class UIMessageIn(msgspec.Struct):
    """A `UIMessage` from today's `useChat`, or an ai@4 message with `content` (and maybe `parts`)."""

    role: Literal["system", "user", "assistant", "data"]
    parts: list[UIMessagePart] = []
    id: Id | None = None
    content: str | None = None

    @property
    def text(self) -> str:
        text = "".join(part.text or "" for part in self.parts if part.type == "text")
        return text or self.content or ""


MAX_BROWSER_TOOLS = 32


class BrowserToolIn(msgspec.Struct):
    """A tool the page runs itself: AG-UI's `Tool`, which the chat body's `tools` takes too. `parameters` is a
    JSON Schema of its input (an object); the name follows the providers' rule for function names."""

    name: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{1,64}(?!\n)$", description="letters, digits, _ and -")]
    description: Annotated[str, msgspec.Meta(max_length=4_000)] = ""
    parameters: dict[str, Any] | None = None


BrowserTools = Annotated[list[BrowserToolIn], msgspec.Meta(max_length=MAX_BROWSER_TOOLS)]


class ChatRequest(msgspec.Struct, rename="camel"):
    """The body `useChat`'s DefaultChatTransport sends; only the last message is read."""

    messages: Annotated[list[UIMessageIn], msgspec.Meta(min_length=1)]
    id: Id | None = None
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    message_id: Id | None = None
    stream_mode: StreamMode | None = None  # overrides CHAT_STREAM_MODE for this answer
    profile_id: Id | None = None  # the model profile (GET /api/profiles); else the conversation's, else the default
    # The agent (GET /api/agents) a new conversation goes to; a started one keeps its own.
    agent: AgentName | None = None
    # What to do when an answer is already running in this conversation (double-texting); else the server's.
    multitask_strategy: MultitaskStrategy | None = None
    # Two profiles: an A/B comparison of their answers (storage/comparisons.py).
    compare_profiles: list[Id] | None = None
    # Whether the answer goes on when the response's reader goes away (a reload); else CHAT_ON_DISCONNECT.
    on_disconnect: OnDisconnect | None = None
    # The answer to the agent's question: the answer that asked goes on (the last message is not read).
    resume: ResumeIn | None = None
    # Values for the agent's own runtime context, for the keys THREADLINE_REQUEST_CONTEXT lists.
    context: dict[str, Any] | None = None
    # Keys of the agent's own input besides the message (`{"email_input": …}`), checked against its input schema.
    input: dict[str, Any] | None = None
    # Tools the page runs itself (the AI SDK's client-side tools): the answer ends with a call of one open.
    tools: BrowserTools | None = None


class AgUiMessageIn(msgspec.Struct, rename="camel"):
    """A message of an AG-UI run's input: only the trailing new user message is read (the history is the
    server's), or the trailing tool messages that answer browser tools' calls; a user message's content is text,
    or text parts."""

    id: Annotated[str, msgspec.Meta(max_length=128)]
    role: Literal["user", "assistant", "system", "developer", "tool", "reasoning", "activity"]
    content: str | list[dict[str, Any]] | None = None
    tool_call_id: str | None = None  # a tool message's: the browser tool's call it answers
    error: str | None = None  # ... when the tool failed


class ResumeEntryIn(msgspec.Struct, rename="camel"):
    """An answer to what a run ended waiting for: an approval (`payload` `{approved, reason?}`) or the agent's
    question (`payload` the reply); `cancelled` declines it."""

    interrupt_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    status: Literal["resolved", "cancelled"]
    payload: Any = None


class RunAgentInput(msgspec.Struct, rename="camel"):
    """AG-UI 1.0's RunAgentInput (POST /api/ag-ui): `threadId` is the conversation's id, as `/api/chat`'s `id`."""

    thread_id: Id
    run_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    messages: Annotated[list[AgUiMessageIn], msgspec.Meta(min_length=1)]
    tools: BrowserTools = []
    context: list[Any] = []
    state: Any = None
    forwarded_props: Any = None
    parent_run_id: str | None = None
    protocol_version: str | None = None
    resume: Annotated[list[ResumeEntryIn], msgspec.Meta(max_length=64)] | None = None


class ChatStreamRequest(msgspec.Struct, rename="camel"):
    """Seed 004's body: one message, and the conversation to continue (a UUID) unless it starts one."""

    message: str = ""  # missing is empty: refused with the document's own "Message cannot be empty"
    conversation_id: str | None = None


class ErrorDetail(msgspec.Struct):
    field: str
    message: str


class ErrorInfo(msgspec.Struct, omit_defaults=True):
    code: str
    message: str
    details: list[ErrorDetail] = []
    retry_after: int | None = msgspec.field(default=None, name="retryAfter")


class ErrorBody(msgspec.Struct):
    error: ErrorInfo


class CancelRequest(msgspec.Struct):
    """`{"conversationId"}`, or seed 002's snake case `{"conversation_id"}`."""

    camel: Id | None = msgspec.field(default=None, name="conversationId")
    snake: Id | None = msgspec.field(default=None, name="conversation_id")

    def __post_init__(self) -> None:
        if self.camel is None and self.snake is None:
            raise ValueError("Object missing required field `conversationId`")

    @property
    def conversation_id(self) -> str:
        return self.camel or self.snake or ""


class CancelResult(msgspec.Struct, rename="camel"):
    cancelled: bool
    conversation_id: str


class ConversationDetail(msgspec.Struct, rename="camel"):
    id: str
    title: str
    created_at: datetime
    last_message_at: datetime
    messages: list[dict[str, Any]]
