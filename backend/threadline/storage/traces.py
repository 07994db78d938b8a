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
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

import msgspec
from psycopg.types.json import Jsonb

from threadline.storage.saver import Pool
from threadline.storage.trace_document import Trace

log = logging.getLogger(__name__)

_decode = msgspec.json.Decoder(Trace).decode
KEEP_REPLACED = 5  # traces of replaced answers a conversation keeps, newest first
# A NUL escaped in JSON text (not an escaped backslash before "u0000"): PostgreSQL's jsonb cannot hold it.
_NUL = re.compile(rb"(?<!\\)((?:\\\\)*)\\u0000")


def storable_json(trace: Trace) -> str:
    """The trace as JSON PostgreSQL stores: a NUL a tool's arguments or result carried becomes U+FFFD (looked
    for first: the substitution tries every position of the trace, a few hundred microseconds for 5 KB)."""
    encoded = msgspec.json.encode(trace)
    return (_NUL.sub(rb"\1\\ufffd", encoded) if b"\\u0000" in encoded else encoded).decode()


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


class PostgresTraces:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.live = LiveTraces()

    async def save(self, client_id: str, trace: Trace, question_id: str, *, keep: bool = True) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO traces (trace_id, client_id, conversation_id, message_id, started_at, trace, question_id) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (trace_id) DO UPDATE SET trace = EXCLUDED.trace",
                (
                    trace.trace_id,
                    client_id,
                    trace.conversation_id,
                    trace.message_id,
                    trace.started_at,
                    Jsonb(trace, dumps=storable_json) if keep else None,
                    question_id,
                ),
            )

    async def conversation_of(self, client_id: str, message_id: str) -> str | None:
        if (live := self.live.find(client_id, message_id=message_id)) is not None:
            return live.conversation_id
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT conversation_id FROM traces WHERE client_id = %s AND message_id = %s LIMIT 1",
                (client_id, message_id),
            )
            row = await cursor.fetchone()
        return None if row is None else str(row["conversation_id"])

    async def bound(self, client_id: str, conversation_id: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM traces WHERE trace_id IN (SELECT trace_id FROM (SELECT trace_id, started_at, "
                "row_number() OVER (PARTITION BY question_id ORDER BY started_at DESC) AS nth FROM traces "
                "WHERE client_id = %s AND conversation_id = %s) ranked "
                "WHERE nth > 1 ORDER BY started_at DESC OFFSET %s)",
                (client_id, conversation_id, KEEP_REPLACED),
            )

    async def _one(self, client_id: str, column: str, value: str) -> Trace | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT trace::text AS trace FROM traces WHERE client_id = %s AND {column} = %s "
                "AND trace IS NOT NULL ORDER BY started_at DESC LIMIT 1",
                (client_id, value),
            )
            row = await cursor.fetchone()
        return None if row is None else _decode(row["trace"])

    async def get(self, client_id: str, trace_id: str) -> Trace | None:
        return self.live.find(client_id, trace_id=trace_id) or await self._one(client_id, "trace_id", trace_id)

    async def by_message(self, client_id: str, message_id: str) -> Trace | None:
        return self.live.find(client_id, message_id=message_id) or await self._one(client_id, "message_id", message_id)

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM traces WHERE client_id = %s AND conversation_id = %s", (client_id, conversation_id)
            )

    async def drop_older_than(self, days: float) -> int:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "UPDATE traces SET trace = NULL WHERE started_at < now() - make_interval(secs => %s) "
                "AND trace IS NOT NULL",
                (days * 86400,),
            )
            return cursor.rowcount


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
