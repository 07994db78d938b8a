"""The ratings of answers in PostgreSQL (the protocol and shared types: storage/feedback.py)."""

from __future__ import annotations

from threadline.storage.feedback import Feedback, RatedAnswer, Rating
from threadline.storage.saver import Pool


class PostgresFeedback:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def set(self, client_id: str, answer: RatedAnswer, rating: Rating, comment: str | None) -> Feedback:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "INSERT INTO feedback (client_id, message_id, conversation_id, trace_id, rating, comment) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (client_id, message_id) DO UPDATE SET "
                "rating = EXCLUDED.rating, comment = EXCLUDED.comment, trace_id = EXCLUDED.trace_id, "
                "updated_at = now() RETURNING rating, comment, updated_at",
                (client_id, answer.message_id, answer.conversation_id, answer.trace_id, rating, comment),
            )
            row = await cursor.fetchone()
        assert row is not None, "INSERT … RETURNING returns the row"
        return Feedback(**row)

    async def clear(self, client_id: str, message_id: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute("DELETE FROM feedback WHERE client_id = %s AND message_id = %s", (client_id, message_id))

    async def of_conversation(self, client_id: str, conversation_id: str) -> dict[str, Feedback]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT message_id, rating, comment, updated_at FROM feedback "
                "WHERE client_id = %s AND conversation_id = %s",
                (client_id, conversation_id),
            )
            rows = await cursor.fetchall()
        return {row.pop("message_id"): Feedback(**row) for row in rows}

    async def of_message(self, client_id: str, message_id: str) -> Feedback | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT rating, comment, updated_at FROM feedback WHERE client_id = %s AND message_id = %s",
                (client_id, message_id),
            )
            row = await cursor.fetchone()
        return None if row is None else Feedback(**row)

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM feedback WHERE client_id = %s AND conversation_id = %s", (client_id, conversation_id)
            )
