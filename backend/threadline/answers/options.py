"""What a route asks of an answer: the user message it answers (with the id the answer will have) and how it runs,
each route setting what its wire needs and leaving the rest to the server's settings."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from threadline.conversations.attachments import CheckedFile, file_ref
from threadline.conversations.state import FileRef
from threadline.settings.answers import MultitaskStrategy, OnDisconnect, StreamMode
from threadline.storage.file_store import StoredFile, file_of


def new_id() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True)
class NewMessage:
    """The user message an answer answers, and the id the answer will have."""

    text: str
    id: str = field(default_factory=new_id)
    answer_id: str = field(default_factory=new_id)
    # Attachments: stored already (an upload's), or checked and stored once the answer is accepted.
    files: tuple[StoredFile | CheckedFile, ...] = ()

    @cached_property
    def references(self) -> tuple[FileRef, ...]:
        """How the conversation keeps the files: by reference (a new file's id comes from its bytes, hashed
        once per message)."""
        return tuple(
            file_ref(file if isinstance(file, StoredFile) else file_of(file.data, file.media_type, file.filename))
            for file in self.files
        )


@dataclass(frozen=True)
class AnswerOptions:
    """How one answer runs; each route sets what its wire needs and leaves the rest to the server's settings."""

    stream_mode: StreamMode = "messages"
    profile_id: str | None = None  # else the conversation's profile, else the default
    agent_id: str | None = None  # as `agent_for` chose it; else the conversation's agent, read again
    regenerate: bool = False  # the message is a question of the conversation, answered again
    edit: bool = False  # the message replaces the conversation's user message with its id
    strategy: MultitaskStrategy = "reject"  # what happens to the visitor's answer already running
    on_disconnect: OnDisconnect | None = None  # a resumable answer's fate when its reader leaves; else the server's
    at_once: int | None = None  # the visitor's answers running at once, at most; else CHAT_ANSWERS_PER_VISITOR
    resumable: bool = False  # recorded for GET /api/chat/{id}/stream (unless CHAT_RESUMABLE=false)
    context: Mapping[str, Any] = field(default_factory=dict)  # the chat body's values for the agent's context
    input: Mapping[str, Any] = field(default_factory=dict)  # ... and for the agent's own input keys
    keep_failed_answer: bool = True  # False: a failed answer leaves no assistant message (seed 004)
    interactive: bool = True  # False: the wire cannot ask for approval, so such tool calls are declined
    comparison_id: str = ""  # set by `compare` for each of a comparison's two answers
    # The page's own tools, `{name, description, parameters}` each: offered to the agent, run by the page.
    browser_tools: tuple[dict[str, Any], ...] = ()
