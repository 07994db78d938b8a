"""A person's rating of an answer: thumbs up or down with an optional comment, one per answer, changeable.

Kept in the `feedback` table (or memory) under the visitor, with the answer's conversation and trace
id, so an operator can read ratings beside the traces they belong to; deleted with the conversation.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

import msgspec

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
