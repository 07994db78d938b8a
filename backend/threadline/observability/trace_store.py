"""Where answers' traces are kept: the `traces` table beside the conversations, or process memory.

A trace is written once, when its answer has ended, as one JSON document; while the answer runs, the
process running it serves the live trace (status `running`). Traces are the visitor's own, like their
conversations: they are found only with the visitor's id, deleted with their conversation, and
dropped after `CHAT_TRACE_RETENTION_DAYS`.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from typing import Protocol

import msgspec
from psycopg.types.json import Jsonb

from threadline.observability.trace import Trace, TraceRecorder
from threadline.postgres_saver import Pool

log = logging.getLogger("threadline.traces")

_decode = msgspec.json.Decoder(Trace).decode
# A NUL escaped in JSON text (not an escaped backslash before "u0000"): PostgreSQL's jsonb cannot hold it.
_NUL = re.compile(rb"(?<!\\)((?:\\\\)*)\\u0000")


def storable_json(trace: Trace) -> str:
    """The trace as JSON PostgreSQL stores: a NUL a tool's arguments or result carried becomes U+FFFD."""
    return _NUL.sub(rb"\1\\ufffd", msgspec.json.encode(trace)).decode()


class LiveTraces:
    """The traces of the answers running in this process, by trace id."""

    def __init__(self) -> None:
        self.running: dict[str, tuple[str, TraceRecorder]] = {}  # trace id → (client id, recorder)

    def find(self, client_id: str, *, trace_id: str | None = None, message_id: str | None = None) -> Trace | None:
        for owner, recorder in self.running.values():
            if owner == client_id and (recorder.trace_id == trace_id or recorder.message_id == message_id):
                return recorder.trace()
        return None


class TraceStore(Protocol):
    live: LiveTraces

    async def save(self, client_id: str, trace: Trace) -> None: ...

    async def get(self, client_id: str, trace_id: str) -> Trace | None: ...

    async def by_message(self, client_id: str, message_id: str) -> Trace | None: ...

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None: ...

    async def drop_older_than(self, days: float) -> int: ...


class PostgresTraces:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.live = LiveTraces()

    async def save(self, client_id: str, trace: Trace) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO traces (trace_id, client_id, conversation_id, message_id, started_at, trace) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (trace_id) DO UPDATE SET trace = EXCLUDED.trace",
                (
                    trace.trace_id,
                    client_id,
                    trace.conversation_id,
                    trace.message_id,
                    trace.started_at,
                    Jsonb(trace, dumps=storable_json),
                ),
            )

    async def _one(self, client_id: str, column: str, value: str) -> Trace | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT trace::text AS trace FROM traces WHERE client_id = %s AND {column} = %s "
                "ORDER BY started_at DESC LIMIT 1",
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
                "DELETE FROM traces WHERE started_at < now() - make_interval(secs => %s)", (days * 86400,)
            )
            return cursor.rowcount


class MemoryTraces:
    """The same in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self) -> None:
        self.live = LiveTraces()
        self.traces: dict[str, tuple[str, Trace]] = {}

    async def save(self, client_id: str, trace: Trace) -> None:
        self.traces[trace.trace_id] = (client_id, trace)

    async def get(self, client_id: str, trace_id: str) -> Trace | None:
        owner, trace = self.traces.get(trace_id, ("", None))
        return self.live.find(client_id, trace_id=trace_id) or (trace if owner == client_id else None)

    async def by_message(self, client_id: str, message_id: str) -> Trace | None:
        found = [
            trace for owner, trace in self.traces.values() if owner == client_id and trace.message_id == message_id
        ]
        return self.live.find(client_id, message_id=message_id) or (found[-1] if found else None)

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None:
        for trace_id, (owner, trace) in list(self.traces.items()):
            if owner == client_id and trace.conversation_id == conversation_id:
                del self.traces[trace_id]

    async def drop_older_than(self, days: float) -> int:
        cutoff = (datetime.now(UTC) - timedelta(days=days)).isoformat()
        old = [trace_id for trace_id, (_, trace) in self.traces.items() if trace.started_at < cutoff]
        for trace_id in old:
            del self.traces[trace_id]
        return len(old)
