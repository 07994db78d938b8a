"""The ratings of answers in process memory, for CHAT_MEMORY_BACKEND=memory (the protocol: storage/feedback.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from threadline.storage.feedback import Feedback, RatedAnswer, Rating


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
