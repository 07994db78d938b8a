"""The running answers' rows (`active_turns`) and the notices between processes, as SQL: answers/active.py decides
when each is run; here is what each does to the table.

A row names the database session of the process that runs the answer (its LISTEN connection). A running answer's
row is written and removed without waiting for PostgreSQL to flush the commit to disk (`synchronous_commit` off
for that transaction alone): every session sees it at once all the same, and a crash that loses the write also
ends the session the row names, which makes any row left stale. So the answer's first token, and the end of its
stream, do not wait for a flush.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import DictRow

from threadline.storage.claims import VISITOR_LOCK
from threadline.storage.postgres.conversation_list import TurnAlong
from threadline.storage.saver import UNFLUSHED, ReadAhead

Connection = psycopg.AsyncConnection[DictRow]
STOP_CHANNEL = "threadline_cancel"  # NOTIFY: stop this thread's running answer
RESUME_CHANNEL = "threadline_resume"  # NOTIFY: please write out this thread's running answer
SESSION = "pid::text || '@' || extract(epoch FROM backend_start)::text"  # a session, even when its pid is reused
# A running answer's row: thread, client, session, answer, most, and what its turn brought (JSON; None for a turn
# that goes on after the person answered it).
RowKey = tuple[str, str, str | None, str, int, str | None]
RECORD = (
    f"WITH locked AS (SELECT pg_advisory_xact_lock_shared({VISITOR_LOCK})), {UNFLUSHED} "
    "INSERT INTO active_turns (thread_id, client_id, session, answer_id, turn_input) "
    "SELECT %(thread)s, %(client)s, %(session)s, %(answer)s, %(input)s::jsonb FROM locked, unflushed "
    "WHERE (SELECT count(*) FROM active_turns WHERE client_id = %(client)s) < %(most)s RETURNING started_at"
)
# The same, first in a round trip with the conversation's turn (answers/active.py): a conversation whose answer runs
# makes no row rather than fail the round trip, whose turn is then not written either.
RECORD_FIRST = RECORD.replace(" RETURNING", " ON CONFLICT DO NOTHING RETURNING")
FORGET = (
    f"WITH {UNFLUSHED} DELETE FROM active_turns WHERE thread_id = %s AND started_at = %s "
    "AND EXISTS (SELECT FROM unflushed)"
)
# A row is stale when the session that wrote it is gone. A row written before this process had its session, or
# before the database last started (a restart ends every session, not the processes that had them: their answers
# go on), is stale only when it is older than any answer may run.
STALE = (
    "((session IS NULL OR started_at < pg_postmaster_start_time()) "
    "AND started_at < now() - make_interval(secs => %(stale_after)s)) OR "
    "(session IS NOT NULL AND started_at >= pg_postmaster_start_time() AND NOT EXISTS "
    f"(SELECT 1 FROM pg_stat_activity WHERE {SESSION} = active_turns.session))"
)


async def record(conn: Connection, key: RowKey) -> datetime | None:
    """The answer's row (its values in `key`), when the client has fewer than `most` running; UniqueViolation when
    the conversation has one already. When it was written (its key for `forget`), else None."""
    row = await (await conn.execute(RECORD, params(*key))).fetchone()
    return None if row is None else row["started_at"]


async def record_along(
    conn: Connection, key: RowKey, *, along: TurnAlong, ahead: ReadAhead | None = None
) -> tuple[datetime | None, psycopg.AsyncCursor[DictRow]]:
    """`record` (its arguments in `key`) with the conversation's turn in one round trip, one transaction (a
    pipeline, sent as it ends): when it makes no row, the turn is not written either. `ahead`, the conversation's
    latest checkpoint, is read in it too, and received once the row is written. When the row was written, and the
    turn's statement."""
    thread, _, _, answer, _, _ = key
    async with conn.pipeline():
        recorded = await conn.execute(RECORD_FIRST, params(*key))
        sent = await along.send(conn, thread, answer)
        if ahead is not None:
            await ahead.send(conn)
    row = await recorded.fetchone()
    if row is None:
        return None, sent
    if ahead is not None:
        await ahead.receive()
    return row["started_at"], sent


def params(
    thread: str, client: str, session: str | None, answer: str, most: int, turn_input: str | None
) -> dict[str, Any]:
    return {"thread": thread, "client": client, "session": session, "answer": answer, "most": most, "input": turn_input}


async def forget(conn: Connection, thread: str, started_at: datetime) -> None:
    """Remove this answer's row only: the next answer in the conversation may have written its own."""
    await conn.execute(FORGET, (thread, started_at))


async def clear_ended(conn: Connection, client: str, session: str, running: list[str]) -> int:
    """Remove the client's rows of this session but those of `running`: answers that ended here, whose own removal
    is still on its way."""
    cursor = await conn.execute(
        "DELETE FROM active_turns WHERE client_id = %s AND session = %s AND NOT thread_id = ANY(%s)",
        (client, session, running),
    )
    return cursor.rowcount


async def clear_stale(conn: Connection, stale_after: float) -> list[tuple[str, dict[str, Any] | None]]:
    """Remove the rows of answers whose process is gone; their threads, and what each one's turn brought."""
    cursor = await conn.execute(
        f"DELETE FROM active_turns WHERE {STALE} RETURNING thread_id, turn_input", {"stale_after": stale_after}
    )
    return [(row["thread_id"], row["turn_input"]) for row in await cursor.fetchall()]


async def runs(conn: Connection, thread: str, client: str | None = None) -> bool:
    """Whether a row says an answer runs in this conversation (of this client, when given)."""
    if client is None:
        cursor = await conn.execute("SELECT 1 FROM active_turns WHERE thread_id = %s", (thread,))
    else:
        cursor = await conn.execute(
            "SELECT 1 FROM active_turns WHERE thread_id = %s AND client_id = %s", (thread, client)
        )
    return await cursor.fetchone() is not None


async def running_of(conn: Connection, client: str) -> tuple[str, str] | None:
    """A conversation (thread) where the client's answer runs, and that answer's message id."""
    cursor = await conn.execute("SELECT thread_id, answer_id FROM active_turns WHERE client_id = %s LIMIT 1", (client,))
    row = await cursor.fetchone()
    return None if row is None else (str(row["thread_id"]), str(row["answer_id"] or ""))


async def answer_in(conn: Connection, thread: str) -> str | None:
    """The message id of the answer a row says runs in this conversation."""
    row = await (await conn.execute("SELECT answer_id FROM active_turns WHERE thread_id = %s", (thread,))).fetchone()
    return None if row is None else str(row["answer_id"] or "")


async def notify(conn: Connection, channel: str, thread: str) -> None:
    """Ask the process listening on `channel` to act on the thread (stop its answer, or write it out)."""
    await conn.execute("SELECT pg_notify(%s, %s)", (channel, thread))


async def listen(conn: psycopg.AsyncConnection[Any]) -> tuple[str | None, AsyncIterator[psycopg.Notify]]:
    """Make `conn` this process's session: its name, and the notices sent to it on both channels."""
    cursor = await conn.execute(f"SELECT {SESSION} FROM pg_stat_activity WHERE pid = pg_backend_pid()")
    session = str((await cursor.fetchone() or ("",))[0]) or None
    await conn.execute(f"LISTEN {STOP_CHANNEL}")
    await conn.execute(f"LISTEN {RESUME_CHANNEL}")
    return session, conn.notifies()


async def adopt(conn: Connection, session: str | None, threads: list[str]) -> None:
    """Rows of this process's running answers, written under a session that ended with its old connection, now
    name its new one."""
    await conn.execute("UPDATE active_turns SET session = %s WHERE thread_id = ANY(%s)", (session, threads))
