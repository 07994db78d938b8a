"""A batch's checkpoint inserts merged into one per table (storage/merged_inserts.py) write what LangGraph's
one-row statements write, run one after the other: the same rows, the same conflicts skipped or updated, on a real
PostgreSQL, for generated batches whose rows meet each other's keys."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.postgres.base import MIGRATIONS
from psycopg.types.json import Jsonb
from threadline.storage.merged_inserts import Statement, merged

TABLES = ("checkpoint_blobs", "checkpoints", "checkpoint_writes")


@pytest.fixture(scope="module")
def connection(database_url: str) -> Iterator[psycopg.Connection]:
    """LangGraph's checkpoint tables in a schema of this test's own."""
    schema = f"merged_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"SET search_path TO {schema}")
        for migration in MIGRATIONS:
            conn.execute(migration)
        yield conn
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


KEY = st.sampled_from(["a", "b"])  # few values, so that rows meet each other's keys
NS = st.just("")  # the root graph's namespace, where most rows are
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=4)
JSON = st.dictionaries(TEXT, st.integers(-9, 9) | TEXT | st.none(), max_size=3).map(Jsonb)
BLOB = st.binary(max_size=12)

ROWS = {
    AsyncPostgresSaver.UPSERT_CHECKPOINT_BLOBS_SQL: st.tuples(KEY, NS, KEY, KEY, TEXT, st.none() | BLOB),
    AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL: st.tuples(KEY, NS, KEY, st.none() | KEY, JSON, JSON),
    AsyncPostgresSaver.UPSERT_CHECKPOINT_WRITES_SQL: st.tuples(
        KEY, NS, KEY, KEY, TEXT, st.integers(-1, 0), TEXT, st.none() | TEXT, BLOB
    ),
    AsyncPostgresSaver.INSERT_CHECKPOINT_WRITES_SQL: st.tuples(
        KEY, NS, KEY, KEY, TEXT, st.integers(-1, 0), TEXT, st.none() | TEXT, BLOB
    ),
}
# A statement that is none of LangGraph's inserts (a batch's prune is one): what comes before it lands before it.
OTHER: Statement = ("DELETE FROM checkpoint_writes WHERE thread_id = %s", [("a",)])

STATEMENTS = st.lists(
    st.one_of(
        *(st.tuples(st.just(query), st.lists(rows, min_size=1, max_size=5)) for query, rows in ROWS.items()),
        st.just(OTHER),
    ),
    max_size=8,
)


def written(conn: psycopg.Connection, earlier: list[Statement], statements: list[Statement]) -> dict[str, list[tuple]]:
    """What the statements leave in the tables, run as a batch is (one pipeline), after `earlier` one by one."""
    conn.execute(f"TRUNCATE {', '.join(TABLES)}")
    with conn.cursor() as cursor:
        for query, rows in earlier:
            cursor.executemany(query, rows)
    with conn.pipeline(), conn.cursor() as cursor:
        for query, rows in statements:
            cursor.executemany(query, rows)
    return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5, 6").fetchall() for table in TABLES}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(earlier=STATEMENTS, statements=STATEMENTS)
def test_merged_inserts_write_what_the_statements_one_by_one_write(connection, earlier, statements):
    sent = merged(statements)
    assert len(sent) <= len(statements)
    assert written(connection, earlier, sent) == written(connection, earlier, statements)


def test_a_batch_of_many_answers_inserts_once_per_table_between_its_other_statements():
    blob = ("t", "", "messages", "1", "msgpack", b"x")
    checkpoint = ("t", "", "1", None, Jsonb({}), Jsonb({}))
    batch = [
        (AsyncPostgresSaver.UPSERT_CHECKPOINT_BLOBS_SQL, [blob, (*blob[:2], "turns", *blob[3:])]),
        (AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL, [checkpoint]),
        (AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL, [(*checkpoint[:2], "2", *checkpoint[3:])]),
        OTHER,
        (AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL, [checkpoint]),
        (AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL, [checkpoint]),  # the same key twice: row by row
    ]
    sent = merged(batch)
    assert [len(rows) for _, rows in sent] == [1, 1, 1, 2]
    assert sent[0][1] == [[["t", "t"], ["", ""], ["messages", "turns"], ["1", "1"], ["msgpack", "msgpack"], [b"x"] * 2]]
    assert sent[2] == OTHER
    assert sent[3] == (AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL, [checkpoint, checkpoint])
