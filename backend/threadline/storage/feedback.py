"""A person's rating of an answer: thumbs up or down with an optional comment, one per answer, changeable.

Kept in the `feedback` table (or memory) under the visitor, with the answer's conversation and trace
id, so an operator can read ratings beside the traces they belong to; deleted with the conversation.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal, Protocol

import msgspec

from threadline.storage.saver import Pool

Rating = Literal["up", "down"]


class Feedback(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True):
    rating: Rating
    updated_at: datetime
    comment: str | None = None


class RatedAnswer(msgspec.Struct, frozen=True):
    """Which answer a rating is for: its message, its conversation, and its trace when it has one."""

    message_id: str
    conversation_id: str
    trace_id: str | None = None


class FeedbackStore(Protocol):
    async def set(self, client_id: str, answer: RatedAnswer, rating: Rating, comment: str | None) -> Feedback: ...

    async def clear(self, client_id: str, message_id: str) -> None: ...

    async def of_conversation(self, client_id: str, conversation_id: str) -> dict[str, Feedback]: ...

    async def of_message(self, client_id: str, message_id: str) -> Feedback | None: ...

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None: ...


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


class MemoryFeedback:
    """The same in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], tuple[str, Feedback]] = {}  # (client, message) → (conversation, feedback)

    async def set(self, client_id: str, answer: RatedAnswer, rating: Rating, comment: str | None) -> Feedback:
        feedback = Feedback(rating=rating, comment=comment, updated_at=datetime.now(UTC))
        self.rows[(client_id, answer.message_id)] = (answer.conversation_id, feedback)
        return feedback

    async def clear(self, client_id: str, message_id: str) -> None:
        self.rows.pop((client_id, message_id), None)

    async def of_conversation(self, client_id: str, conversation_id: str) -> dict[str, Feedback]:
        return {
            message: feedback
            for (owner, message), (conversation, feedback) in self.rows.items()
            if (owner, conversation) == (client_id, conversation_id)
        }

    async def of_message(self, client_id: str, message_id: str) -> Feedback | None:
        return self.rows.get((client_id, message_id), ("", None))[1]

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None:
        for key, (conversation, _) in list(self.rows.items()):
            if key[0] == client_id and conversation == conversation_id:
                del self.rows[key]
