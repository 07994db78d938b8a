"""What the two rows an answer writes before its first token cost, and what one round trip for both would save.
In one process against a fresh PostgreSQL database, no HTTP: the running answer's row (`active_turns`, as
answers/active.py writes it) then the conversation's (`conversations`, as storage/postgres/conversation_list.py
does), each on a pooled connection of its own, as an answer starts; the same two statements sent together in one
psycopg pipeline on one connection; and a bare `SELECT 1` with a pool checkout, the price of a round trip. A
benchmark, never a test: run it by hand

    python3 tasks.py bench start-rows [--answers 2000] [--rounds 5]

Prints client CPU and wall time per answer start, the median and range over the rounds, interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import msgspec
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from threadline.storage.conversation_list import StorageLimits, title_from
from threadline.storage.fallback import DatabaseHealth
from threadline.storage.migrations import migrate
from threadline.storage.postgres import running_answers
from threadline.storage.postgres.conversation_list import TOUCH, PostgresConversations
from threadline.storage.saver import Pool, PooledPostgresSaver
from threadline.storage.schema import Schema
from threadline_testing.database import fresh_database

CLIENTS = [uuid.uuid4().hex for _ in range(64)]
TEXT = "Plan a trip to **Lisbon** in [May](https://example.com)"
# What the turn brings, as the answer's row keeps it (answers/active.py): a question's graph input.
TURN_INPUT = msgspec.json.encode(
    {
        "user_message_id": uuid.uuid4().hex,
        "text": TEXT,
        "regenerate": False,
        "assistant_message_id": uuid.uuid4().hex,
        "model": "openai:gpt-4o-mini",
        "created_at": "2026-11-29T12:00:00.000Z",
        "trace_id": uuid.uuid4().hex,
        "profile": "default",
    }
).decode()


def starts(pool: Pool) -> dict[str, Callable[[str, str], Awaitable[None]]]:
    limits = StorageLimits(500, 10_000_000)
    conversations = PostgresConversations(pool, DatabaseHealth(), limits, PooledPostgresSaver(pool).batches)

    async def one_after_the_other(thread: str, client: str) -> None:
        async with pool.connection() as conn:
            await running_answers.record(conn, (thread, client, None, uuid.uuid4().hex, 3, TURN_INPUT))
        await conversations.touch(thread, client, TEXT)

    async def one_round_trip(thread: str, client: str, turn_input: str | None = TURN_INPUT) -> None:
        record = running_answers.params(thread, client, None, uuid.uuid4().hex, 3, turn_input)
        touch = {"client_id": client, "id": thread, "title": title_from(TEXT), "turns": 1, "max_turns": 500}
        touch |= {"max_conversations": 10_000_000, "profile_id": None, "agent_id": None}
        async with pool.connection() as conn, conn.pipeline():
            recorded = await conn.execute(running_answers.RECORD, record)
            touched = await conn.execute(TOUCH, touch)
            await recorded.fetchone()
            await touched.fetchone()

    async def a_bare_round_trip(thread: str, client: str) -> None:
        async with pool.connection() as conn:
            await (await conn.execute("SELECT 1")).fetchone()

    return {
        "both rows, one after the other": one_after_the_other,
        "both rows, one round trip": one_round_trip,
        "both rows, one round trip, the turn's input not kept": partial(one_round_trip, turn_input=None),
        "SELECT 1 (a round trip)": a_bare_round_trip,
    }


async def run(url: str, answers: int, rounds: int) -> None:
    schema = Schema("threadline")
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    pool: Pool = AsyncConnectionPool(url, min_size=2, max_size=2, open=False, kwargs=kwargs, configure=schema.configure)
    await pool.open(wait=True)
    await migrate(pool, schema)
    kinds = starts(pool)
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in kinds}
    for round_ in range(rounds + 1):  # the first warms up: prepared statements, the pool's connections
        for name, start in kinds.items():
            cpu = wall = 0.0
            for n in range(answers if round_ else 100):
                cpu_before, wall_before = time.process_time(), time.perf_counter()
                await start(uuid.uuid4().hex, CLIENTS[n % len(CLIENTS)])  # a new conversation of one of 64 visitors
                cpu, wall = cpu + time.process_time() - cpu_before, wall + time.perf_counter() - wall_before
                async with pool.connection() as conn:  # the answer's end, not timed
                    await conn.execute("DELETE FROM active_turns")
            if round_:
                figures[name].append((cpu / answers * 1e3, wall / answers * 1e3))
    await pool.close()
    print("| per answer start | client CPU | wall |\n|---|---|---|")
    for name, runs in figures.items():
        print(f"| {name} | {_spread([cpu for cpu, _ in runs])} ms | {_spread([wall for _, wall in runs])} ms |")


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with fresh_database(Path(tempfile.mkdtemp())) as url:
        asyncio.run(run(url, args.answers, args.rounds))


if __name__ == "__main__":
    main()
