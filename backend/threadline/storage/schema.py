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


async def schema_in_use(url: str, wanted: str) -> str:
    """`wanted`, unless the database holds threadline's tables in `public` and none in `wanted` yet."""
    if wanted == PUBLIC:
        return wanted
    async with await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=10) as conn:
        cursor = await conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL AS before, to_regclass(%s) IS NOT NULL AS own",
            (f"{PUBLIC}.{MARK}", f'"{wanted}".{MARK}'),
        )
        row = await cursor.fetchone()
    if row is not None and row[0] and not row[1]:
        log.warning(
            "threadline's tables are in schema %s, where a version before this one put them; new databases get "
            "schema %s. Set THREADLINE_DATABASE_SCHEMA=%s to say so, or move them while no threadline process "
            "runs (ALTER TABLE … SET SCHEMA)",
            PUBLIC,
            wanted,
            PUBLIC,
        )
        return PUBLIC
    return wanted


def search_path(schema: str) -> str:
    return PUBLIC if schema == PUBLIC else f'"{schema}", {PUBLIC}'


def configure(schema: str) -> Any:
    """The pool's `configure`: each new connection looks in threadline's schema first."""

    async def look_in_schema(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(f"SET search_path TO {search_path(schema)}")

    return look_in_schema


async def create_schema(conn: psycopg.AsyncConnection[Any], schema: str) -> None:
    """Made before any table: until it exists, a table would be created in the next schema of the path."""
    if schema != PUBLIC:
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
