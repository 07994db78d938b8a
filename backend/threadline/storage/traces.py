"""Where answers' traces are kept: the `traces` table beside the conversations, or process memory.

A trace is written once, when its answer has ended, as one JSON document; while the answer runs, the
process running it serves the live trace (status `running`). Traces are the visitor's own, like their
conversations: they are found only with the visitor's id, deleted with their conversation, and their
documents dropped after `CHAT_TRACE_RETENTION_DAYS`. The row itself stays with its conversation: it is
how a rating finds the answer's conversation in one lookup. A conversation keeps the traces of the
answers it holds and the newest KEEP_REPLACED of those that regenerated answers replaced.
"""

from __future__ import annotations

import logging
from typing import Protocol

import msgspec

from threadline.storage.trace_document import Trace

log = logging.getLogger(__name__)

_decode = msgspec.json.Decoder(Trace).decode
KEEP_REPLACED = 5  # traces of replaced answers a conversation keeps, newest first


class Recording(Protocol):
    """A running answer's trace as it is recorded (observability/trace.py's `TraceRecorder`)."""

    trace_id: str
    message_id: str

    def trace(self) -> Trace: ...


class LiveTraces:
    """The traces of the answers running in this process, by trace id: served as they are until they are stored."""

    def __init__(self) -> None:
        self.running: dict[str, tuple[str, Recording]] = {}  # trace id → (client id, recorder)

    def find(self, client_id: str, *, trace_id: str | None = None, message_id: str | None = None) -> Trace | None:
        for owner, recorder in self.running.values():
            if owner == client_id and (recorder.trace_id == trace_id or recorder.message_id == message_id):
                return recorder.trace()
        return None


class TraceStore(Protocol):
    live: LiveTraces

    async def save(self, client_id: str, trace: Trace, question_id: str, *, keep: bool = True) -> None:
        """Store the ended answer's trace; without `keep`, only which conversation and question it is in."""
        ...

    async def conversation_of(self, client_id: str, message_id: str) -> str | None:
        """The conversation of the visitor's answer with this message id, from its trace row."""
        ...

    async def bound(self, client_id: str, conversation_id: str) -> None:
        """Drop the traces of replaced answers beyond the newest KEEP_REPLACED."""
        ...

    async def get(self, client_id: str, trace_id: str) -> Trace | None: ...

    async def by_message(self, client_id: str, message_id: str) -> Trace | None: ...

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None: ...

    async def drop_older_than(self, days: float) -> int: ...
