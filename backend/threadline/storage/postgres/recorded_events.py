"""The recordings of running answers that a reader in another process follows (`recorded_events`), as SQL:
answers/recordings.py decides what is written and when, and reads it back."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import DictRow

Connection = psycopg.AsyncConnection[DictRow]
Row = tuple[str, str, int, bytes, bool]  # thread, message, the first event's sequence number, the events, ended


async def write(conn: Connection, rows: list[Row], ended: list[tuple[str, str]], stale_after: float) -> None:
    """Add the new events, in one statement; remove the recordings that ended a while ago and any an ended process
    left behind for more than `stale_after` seconds."""
    if rows:
        async with conn.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO recorded_events (thread_id, message_id, seq, data, ended) VALUES (%s, %s, %s, %s, %s)",
                rows,
            )
    if ended:
        await conn.execute(
            "DELETE FROM recorded_events WHERE (thread_id, message_id) IN "
            "(SELECT * FROM unnest(%s::text[], %s::text[])) OR created_at < now() - make_interval(secs => %s)",
            ([thread for thread, _ in ended], [message for _, message in ended], stale_after),
        )


async def latest(conn: Connection, thread: str) -> tuple[str, bool] | None:
    """The thread's newest recording: its answer's message id, and whether it has ended."""
    cursor = await conn.execute(
        "SELECT message_id, bool_or(ended) AS ended FROM recorded_events WHERE thread_id = %s "
        "GROUP BY message_id ORDER BY max(created_at) DESC LIMIT 1",
        (thread,),
    )
    row = await cursor.fetchone()
    return None if row is None else (str(row["message_id"]), bool(row["ended"]))


async def after(conn: Connection, thread: str, message: str, seq: int) -> list[dict[str, Any]]:
    """The recording's rows after sequence number `seq`, in order: each `seq`, `data` and `ended`."""
    cursor = await conn.execute(
        "SELECT seq, data, ended FROM recorded_events WHERE thread_id = %s AND message_id = %s AND seq > %s "
        "ORDER BY seq",
        (thread, message, seq),
    )
    return list(await cursor.fetchall())
