"""The answers' traces in process memory, for CHAT_MEMORY_BACKEND=memory (the protocol: storage/traces.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from threadline.storage.trace_document import Trace
from threadline.storage.traces import KEEP_REPLACED, LiveTraces


@dataclass
class MemoryRow:
    owner: str
    conversation_id: str
    message_id: str
    question_id: str
    started_at: str
    trace: Trace | None  # None once its document is dropped, or when it was not kept


class MemoryTraces:
    """The same in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self) -> None:
        self.live = LiveTraces()
        self.rows: dict[str, MemoryRow] = {}  # by trace id

    async def save(self, client_id: str, trace: Trace, question_id: str, *, keep: bool = True) -> None:
        self.rows[trace.trace_id] = MemoryRow(
            client_id, trace.conversation_id, trace.message_id, question_id, trace.started_at, trace if keep else None
        )

    def _mine(self, client_id: str) -> list[tuple[str, MemoryRow]]:
        return [(trace_id, row) for trace_id, row in self.rows.items() if row.owner == client_id]

    async def get(self, client_id: str, trace_id: str) -> Trace | None:
        row = self.rows.get(trace_id)
        return self.live.find(client_id, trace_id=trace_id) or (row.trace if row and row.owner == client_id else None)

    async def by_message(self, client_id: str, message_id: str) -> Trace | None:
        found = [row.trace for _, row in self._mine(client_id) if row.message_id == message_id and row.trace]
        return self.live.find(client_id, message_id=message_id) or (found[-1] if found else None)

    async def conversation_of(self, client_id: str, message_id: str) -> str | None:
        if (live := self.live.find(client_id, message_id=message_id)) is not None:
            return live.conversation_id
        found = [row.conversation_id for _, row in self._mine(client_id) if row.message_id == message_id]
        return found[-1] if found else None

    async def bound(self, client_id: str, conversation_id: str) -> None:
        answered: set[str] = set()
        replaced = []
        for trace_id, row in sorted(self._mine(client_id), key=lambda entry: entry[1].started_at, reverse=True):
            if row.conversation_id == conversation_id:
                if row.question_id in answered:
                    replaced.append(trace_id)
                answered.add(row.question_id)
        for trace_id in replaced[KEEP_REPLACED:]:
            del self.rows[trace_id]

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None:
        for trace_id, row in self._mine(client_id):
            if row.conversation_id == conversation_id:
                del self.rows[trace_id]

    async def drop_older_than(self, days: float) -> int:
        cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat()
        old = [row for row in self.rows.values() if row.trace is not None and row.started_at < cutoff]
        for row in old:
            row.trace = None
        return len(old)
