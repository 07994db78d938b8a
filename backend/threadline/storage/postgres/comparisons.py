"""The A/B comparisons in PostgreSQL (the protocol and shared types: storage/comparisons.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from threadline.storage.comparisons import ComparedAnswer, Comparison, Preference, Side, Vote
from threadline.storage.saver import Pool

_DOCUMENT = msgspec.json.Encoder()


class PostgresComparisons:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.decode = msgspec.json.Decoder(Comparison).decode

    async def add(self, client_id: str, comparison: Comparison) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO comparisons (id, client_id, conversation_id, profile_a, profile_b, document) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    comparison.id,
                    client_id,
                    comparison.conversation_id,
                    comparison.a.profile,
                    comparison.b.profile,
                    _DOCUMENT.encode(comparison).decode(),
                ),
            )

    async def get(self, client_id: str, comparison_id: str) -> Comparison | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT document::text AS document FROM comparisons WHERE client_id = %s AND id = %s",
                (client_id, comparison_id),
            )
            row = await cursor.fetchone()
        return None if row is None else self.decode(row["document"])

    async def answered(
        self, client_id: str, comparison_id: str, side: Side, answer: ComparedAnswer, kept: dict[str, Any]
    ) -> None:
        # One side's part of the document only: the two answers end independently, perhaps at once.
        async with self.pool.connection() as conn:
            await conn.execute(
                "UPDATE comparisons SET document = jsonb_set(document, %(side)s, %(answer)s::jsonb) "
                "|| jsonb_build_object('kept', coalesce(document->'kept', '{}') || jsonb_build_object(%(key)s::text, "
                "%(kept)s::jsonb)) WHERE client_id = %(client)s AND id = %(id)s",
                {
                    "side": [side.lower()],
                    "answer": _DOCUMENT.encode(answer).decode(),
                    "key": side,
                    "kept": _DOCUMENT.encode(kept).decode(),
                    "client": client_id,
                    "id": comparison_id,
                },
            )

    async def kept(self, client_id: str, comparison_id: str, side: Side) -> dict[str, Any] | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT document->'kept'->%s AS kept FROM comparisons WHERE client_id = %s AND id = %s",
                (side, client_id, comparison_id),
            )
            row = await cursor.fetchone()
        return None if row is None else row["kept"]

    async def vote(self, client_id: str, comparison_id: str, preference: Preference) -> Comparison | None:
        vote = Vote(preference=preference, at=datetime.now(UTC))
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "UPDATE comparisons SET preference = %(preference)s, document = document "
                "|| jsonb_build_object('preference', %(preference)s::text, 'votedAt', %(at)s::jsonb, "
                "'votes', coalesce(document->'votes', '[]') || jsonb_build_array(%(vote)s::jsonb)) "
                "WHERE client_id = %(client)s AND id = %(id)s RETURNING document::text AS document",
                {
                    "preference": preference,
                    "at": _DOCUMENT.encode(vote.at).decode(),
                    "vote": _DOCUMENT.encode(vote).decode(),
                    "client": client_id,
                    "id": comparison_id,
                },
            )
            row = await cursor.fetchone()
        return None if row is None else self.decode(row["document"])

    async def settle(self, client_id: str, conversation_id: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "UPDATE comparisons SET document = document - 'kept' WHERE client_id = %s AND conversation_id = %s "
                "AND preference IS NOT NULL AND document ? 'kept'",
                (client_id, conversation_id),
            )

    async def pending(self, client_id: str, conversation_id: str) -> str | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT id FROM comparisons WHERE client_id = %s AND conversation_id = %s AND preference IS NULL "
                "LIMIT 1",
                (client_id, conversation_id),
            )
            row = await cursor.fetchone()
        return None if row is None else str(row["id"])

    async def counts(self) -> list[tuple[str, str, str | None, int]]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT profile_a, profile_b, preference, count(*) AS n FROM comparisons GROUP BY 1, 2, 3"
            )
            return [
                (row["profile_a"], row["profile_b"], row["preference"], row["n"]) for row in await cursor.fetchall()
            ]

    async def delete_conversation(self, client_id: str, conversation_id: str) -> list[str]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "DELETE FROM comparisons WHERE client_id = %s AND conversation_id = %s RETURNING id",
                (client_id, conversation_id),
            )
            return [row["id"] for row in await cursor.fetchall()]
