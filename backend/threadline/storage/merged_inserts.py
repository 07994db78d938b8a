"""A batch of checkpoint writes as few statements: LangGraph's one-row inserts merged into one insert per table.

LangGraph's saver inserts each blob, checkpoint and pending write with a statement of its own (`executemany`), 23
statements for a two-token answer of the built-in agent. psycopg binds each statement of a pipeline and reads its
result in Python, and PostgreSQL plans and runs each. Here the rows a batch inserts into one table with one of
LangGraph's statements go in one statement, its columns as arrays (`unnest`): under load, when a batch carries the
steps of many answers (storage/saver.py: `BatchedWrites`), a batch of any size makes about three inserts. The
arrays go in PostgreSQL's binary format (`%b`): psycopg writes a text array in Python, escaping each element, which
cost more than the statements saved (60 blobs: 12.6 µs of CPU a row one by one, 10.5 as a text array, 4 binary).

The rows land as LangGraph's statements would land them: in order within a table (a run of one of its inserts
ends where its other insert comes), with the same conflict handling. Any other statement of the batch (a prune,
`KEEP_LATEST`) keeps its place: the inserts before it are sent before it, those after it after it. Rows whose
`DO UPDATE` would meet each other in one statement (the same key twice, which PostgreSQL refuses in one insert)
are inserted one by one, as LangGraph does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

Statement = tuple[str, list[Any]]  # a query and the rows of parameters it runs for

BLOBS = """
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT * FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::bytea[])
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING"""

CHECKPOINTS = """
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT * FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[], %b::jsonb[], %b::jsonb[])
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    checkpoint = EXCLUDED.checkpoint,
    metadata = EXCLUDED.metadata"""

_WRITES = """
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT * FROM unnest(
    %b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::integer[], %b::text[], %b::text[], %b::bytea[]
)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) """

WRITES_UPSERTED = _WRITES + "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
WRITES_INSERTED = _WRITES + "DO NOTHING"

# LangGraph's one-row insert → its table, the same insert of many rows, and where a row's key is when it updates
# on conflict. Keyed by LangGraph's own statements: a release whose statements differ has them sent as they are.
MERGED: dict[str, tuple[str, str, tuple[int, ...] | None]] = {
    AsyncPostgresSaver.UPSERT_CHECKPOINT_BLOBS_SQL: ("checkpoint_blobs", BLOBS, None),
    AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL: ("checkpoints", CHECKPOINTS, (0, 1, 2)),
    AsyncPostgresSaver.UPSERT_CHECKPOINT_WRITES_SQL: ("checkpoint_writes", WRITES_UPSERTED, (0, 1, 2, 3, 5)),
    AsyncPostgresSaver.INSERT_CHECKPOINT_WRITES_SQL: ("checkpoint_writes", WRITES_INSERTED, None),
}


def merged(statements: Iterable[Statement]) -> list[Statement]:
    """`statements` (each run for each of its rows, in order) as the fewest that write the same: a table's rows
    in the order given, whichever table's come first."""
    sent: list[Statement] = []
    runs: dict[str, tuple[str, list[Any]]] = {}  # by table: the insert and its rows since another statement
    for query, rows in statements:
        if query not in MERGED:
            sent.extend(_in_one(*run) for run in runs.values())
            runs.clear()
            sent.append((query, rows))
            continue
        table = MERGED[query][0]
        if table in runs and runs[table][0] != query:  # the table's other insert: its rows after the run's
            sent.append(_in_one(*runs.pop(table)))
        runs.setdefault(table, (query, []))[1].extend(rows)
    sent.extend(_in_one(*run) for run in runs.values())
    return sent


def _in_one(query: str, rows: list[tuple[Any, ...]]) -> Statement:
    """The rows as one statement of arrays, a column each; one by one when one alone or when two would update the
    same row."""
    _, many, key = MERGED[query]
    if len(rows) == 1 or (key is not None and len({tuple(row[i] for i in key) for row in rows}) < len(rows)):
        return query, rows
    return many, [[list(column) for column in zip(*rows, strict=True)]]
