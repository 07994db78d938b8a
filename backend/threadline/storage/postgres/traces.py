"""The answers' traces in PostgreSQL (the protocol and shared types: storage/traces.py)."""

from __future__ import annotations

import re

import msgspec
from psycopg.types.json import Jsonb

from threadline.storage.saver import BatchedWrites, Pool, aside
from threadline.storage.trace_document import Trace
from threadline.storage.traces import KEEP_REPLACED, LiveTraces, _decode

# A NUL escaped in JSON text (not an escaped backslash before "u0000"): PostgreSQL's jsonb cannot hold it.
_NUL = re.compile(rb"(?<!\\)((?:\\\\)*)\\u0000")


def storable_json(trace: Trace) -> str:
    """The trace as JSON PostgreSQL stores: a NUL a tool's arguments or result carried becomes U+FFFD (looked
    for first: the substitution tries every position of the trace, a few hundred microseconds for 5 KB)."""
    encoded = msgspec.json.encode(trace)
    return (_NUL.sub(rb"\1\\ufffd", encoded) if b"\\u0000" in encoded else encoded).decode()


SAVE = (
    "INSERT INTO traces (trace_id, client_id, conversation_id, message_id, started_at, trace, question_id) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (trace_id) DO UPDATE SET trace = EXCLUDED.trace"
)


class PostgresTraces:
    def __init__(self, pool: Pool, batches: BatchedWrites) -> None:
        self.pool = pool
        self.batches = batches  # an ended answer's trace goes with the next batch of checkpoint writes
        self.live = LiveTraces()

    async def save(self, client_id: str, trace: Trace, question_id: str, *, keep: bool = True) -> None:
        kept = Jsonb(trace, dumps=storable_json) if keep else None
        row = (trace.trace_id, client_id, trace.conversation_id, trace.message_id, trace.started_at, kept, question_id)
        await self.batches.write(aside("trace", trace.trace_id), [(SAVE, [row])])

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
