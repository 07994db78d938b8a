"""The conversation list in process memory, for CHAT_MEMORY_BACKEND=memory (the protocol:
storage/conversation_list.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import msgspec

from threadline.storage.conversation_list import (
    ANONYMOUS,
    FIRST_PAGE,
    SEARCHED_CHARS,
    ConversationSummary,
    Page,
    Pending,
    StorageLimits,
    search_terms,
    title_from,
)
from threadline.storage.fallback import SaveRetries


class MemoryConversations:
    """The same interface in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self, limits: StorageLimits) -> None:
        self.limits = limits
        self.rows: dict[tuple[str, str], tuple[int, ConversationSummary]] = {}
        self.counts: dict[str, int] = {}  # conversations per visitor, so a limit check does not scan every row
        self.pending: dict[str, Pending] = {}  # never anything: memory cannot go away
        self.retries = SaveRetries()
        self.words: dict[tuple[str, str], list[str]] = {}  # what finds each conversation, lower case

    async def save_pending(self) -> None:
        """Nothing waits: memory cannot go away."""

    async def touch(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
        agent_id: str | None = None,
    ) -> bool:
        now = datetime.now(UTC)
        turns, known = self.rows.get((client_id, conversation_id), (0, None))
        turns += 1 if new_turn else 0
        if known is None and self.counts.get(client_id, 0) >= self.limits.conversations_per_visitor:
            raise self.limits.too_many_conversations()
        if turns > self.limits.turns_per_conversation:
            raise self.limits.too_many_turns()
        if known is None:
            self.counts[client_id] = self.counts.get(client_id, 0) + 1
        self.rows[(client_id, conversation_id)] = (
            turns,
            ConversationSummary(
                id=conversation_id,
                title=known.title if known else title_from(first_message),
                created_at=known.created_at if known else now,
                last_message_at=now,
                profile_id=profile_id,
                agent_id=known.agent_id if known else agent_id,
            ),
        )
        return known is None

    def along(self, *_: object, **__: object) -> None:
        """Nothing goes in a round trip: memory has none."""

    async def get(self, conversation_id: str, client_id: str) -> ConversationSummary | None:
        return self.rows.get((client_id, conversation_id), (0, None))[1]

    async def list(self, client_id: str, page: Page = FIRST_PAGE) -> list[ConversationSummary]:
        """A simple match: every term somewhere in the title or the words said."""
        terms = search_terms(page.query)
        if page.query and not terms:
            return []
        mine = [
            conversation
            for (owner, id_), (_, conversation) in self.rows.items()
            if owner == client_id
            and (page.after is None or (conversation.last_message_at, id_) < page.after)
            and all(term in conversation.title.lower() or term in self._said(owner, id_) for term in terms)
        ]
        return sorted(mine, key=lambda row: (row.last_message_at, row.id), reverse=True)[: page.limit]

    def _said(self, client_id: str, conversation_id: str) -> str:
        return "\n".join(self.words.get((client_id, conversation_id), ()))

    async def name(self, conversation_id: str, client_id: str, title: str, unless_not: str) -> bool:
        return await self.rename(conversation_id, client_id, title, unless_not) is not None

    async def remember_words(self, conversation_id: str, client_id: str, text: str) -> None:
        if (client_id, conversation_id) in self.rows:
            self.words.setdefault((client_id, conversation_id), []).append(text[:SEARCHED_CHARS].lower())

    async def rename(
        self, conversation_id: str, client_id: str, title: str, unless_not: str | None = None
    ) -> ConversationSummary | None:
        row = self.rows.get((client_id, conversation_id))
        if row is None or unless_not not in (None, row[1].title):
            return None
        renamed = msgspec.structs.replace(row[1], title=title)
        self.rows[(client_id, conversation_id)] = (row[0], renamed)
        return renamed

    async def idle(self, days: float, anonymous_only: bool = False, limit: int = 500) -> Sequence[tuple[str, str]]:
        cutoff = datetime.now(UTC) - timedelta(days=days)
        found = sorted(
            (row.last_message_at, owner, id_)
            for (owner, id_), (_, row) in self.rows.items()
            if row.last_message_at < cutoff and (not anonymous_only or re.match(ANONYMOUS, owner))
        )
        return [(owner, id_) for _, owner, id_ in found[:limit]]

    async def delete(self, conversation_id: str, client_id: str) -> bool:
        self.words.pop((client_id, conversation_id), None)
        if self.rows.pop((client_id, conversation_id), None) is None:
            return False
        if left := self.counts.pop(client_id) - 1:
            self.counts[client_id] = left
        return True
