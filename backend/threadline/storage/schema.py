"""The PostgreSQL schema threadline's tables live in: one of their own (THREADLINE_DATABASE_SCHEMA, `threadline`), so
that a host app's tables of the same names (`conversations`, `files`, LangGraph's own checkpoint tables) never meet
them. Every connection looks in it first, then in `public`, where extensions keep their types.

A database a version before this one set up has threadline's tables in `public`: they stay there, and it is said.
Moving them while processes of that version still run (a rolling deployment) would take their tables away.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

log = logging.getLogger(__name__)

PUBLIC = "public"
MARK = "threadline_migrations"  # the table every database threadline set up has (storage/migrations.py)


class Schema:
    """The schema asked for, and the one chosen when the tables are set up (storage/migrations.py, under the
    migration lock, on the connection that holds it): until then no connection is told where to look."""

    def __init__(self, wanted: str) -> None:
        self.wanted = wanted
        self.chosen: str | None = None

    async def configure(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """The pool's `configure`: each connection made once the schema is chosen looks in it first."""
        if self.chosen is not None:
            await look_in(conn, self.chosen)

    async def choose(self, conn: psycopg.AsyncConnection[Any]) -> str:
        """`wanted`, unless the database holds threadline's tables in `public` and none in `wanted` yet; made
        before any table (until it exists a table would be created in the next schema of the path), and `conn`
        looks in it from now on."""
        chosen = self.wanted
        if chosen != PUBLIC:
            cursor = await conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL AS before, to_regclass(%s) IS NOT NULL AS own",
                (f"{PUBLIC}.{MARK}", f'"{chosen}".{MARK}'),
            )
            row = await cursor.fetchone()
            if row is not None and row["before"] and not row["own"]:
                log.warning(
                    "threadline's tables are in schema %s, where a version before this one put them; new databases "
                    "get schema %s. Set THREADLINE_DATABASE_SCHEMA=%s to say so, or move them while no threadline "
                    "process runs (ALTER TABLE … SET SCHEMA)",
                    PUBLIC,
                    chosen,
                    PUBLIC,
                )
                chosen = PUBLIC
            else:
                await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{chosen}"')
        self.chosen = chosen
        await look_in(conn, chosen)
        return chosen


async def look_in(conn: psycopg.AsyncConnection[Any], schema: str) -> None:
    path = PUBLIC if schema == PUBLIC else f'"{schema}", {PUBLIC}'
    await conn.execute(f"SET search_path TO {path}")
