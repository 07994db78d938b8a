"""A fresh PostgreSQL database: on TEST_DATABASE_URL's server, else the local one, else an embedded one."""

from __future__ import annotations

import os
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
# The schema threadline's tables get in a new database (THREADLINE_DATABASE_SCHEMA's default): a test's own
# connection to a fresh database looks there first, as the server's do.
TEST_SCHEMA = "threadline"


def local_server(variable: str = "TEST_DATABASE_URL") -> str | None:
    """The server `variable` names, else the PostgreSQL on 127.0.0.1:5432 if it answers, else None."""
    if url := os.environ.get(variable):
        return url
    try:
        psycopg.connect(LOCAL_POSTGRES, connect_timeout=3).close()
        return LOCAL_POSTGRES
    except psycopg.OperationalError:
        return None


@contextmanager
def fresh_database(embedded_dir: Path, variable: str = "TEST_DATABASE_URL") -> Iterator[str]:
    """Create a database with a unique name on the server `variable` names (else the local one), yield its
    URL, drop it afterwards. Without a server to use, an embedded one (the pgserver wheel) keeps its files
    in `embedded_dir`."""
    server_url = local_server(variable)
    if server_url is None:
        import pgserver

        server_url = pgserver.get_server(embedded_dir, cleanup_mode="stop").get_uri()
    name = f"threadline_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    options = urllib.parse.urlencode({"options": f"-c search_path={TEST_SCHEMA},public"}, quote_via=urllib.parse.quote)
    try:
        yield urllib.parse.urlsplit(server_url)._replace(path=f"/{name}", query=options).geturl()
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def thread_footprint(database_url: str, thread_id: str) -> tuple[int, int]:
    """(rows, bytes) a conversation's thread takes in LangGraph's checkpoint tables; bytes as stored, after
    PostgreSQL's own compression (`pg_column_size`)."""
    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
    rows = " + ".join(f"(SELECT count(*) FROM {table} WHERE thread_id = %(t)s)" for table in tables)
    size = " + ".join(
        f"(SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t WHERE thread_id = %(t)s)" for table in tables
    )
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        row = await (await conn.execute(f"SELECT {rows}, {size}", {"t": thread_id})).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


async def conversation_footprint(database_url: str, conversation_id: str) -> tuple[int, int]:
    """(bytes, threads) a conversation takes: every checkpoint thread of it (A/B branches included) and its
    comparison records; bytes as stored (`pg_column_size`). Conversation ids must be unique in the database."""
    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
    size = " + ".join(
        f"(SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t WHERE thread_id LIKE %(t)s)" for table in tables
    )
    records = "(SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM comparisons c WHERE conversation_id = %(c)s)"
    threads = "(SELECT count(DISTINCT thread_id) FROM checkpoints WHERE thread_id LIKE %(t)s)"
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        cursor = await conn.execute(
            f"SELECT {size} + {records}, {threads}", {"t": f"%:{conversation_id}%", "c": conversation_id}
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0]), int(row[1])
