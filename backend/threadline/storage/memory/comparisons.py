"""The A/B comparisons in process memory, for CHAT_MEMORY_BACKEND=memory (the protocol: storage/comparisons.py)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import msgspec

from threadline.storage.comparisons import ComparedAnswer, Comparison, Preference, Side, Vote


class MemoryComparisons:
    """The same in process memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], Comparison] = {}  # (client, comparison id) → record
        self.answers: dict[tuple[str, str, Side], dict[str, Any]] = {}  # each side's kept answer

    async def add(self, client_id: str, comparison: Comparison) -> None:
        self.rows[(client_id, comparison.id)] = comparison

    async def get(self, client_id: str, comparison_id: str) -> Comparison | None:
        return self.rows.get((client_id, comparison_id))

    async def answered(
        self, client_id: str, comparison_id: str, side: Side, answer: ComparedAnswer, kept: dict[str, Any]
    ) -> None:
        if (comparison := self.rows.get((client_id, comparison_id))) is not None:
            change = {"a": answer} if side == "A" else {"b": answer}
            self.rows[(client_id, comparison_id)] = msgspec.structs.replace(comparison, **change)
            self.answers[(client_id, comparison_id, side)] = kept

    async def kept(self, client_id: str, comparison_id: str, side: Side) -> dict[str, Any] | None:
        return self.answers.get((client_id, comparison_id, side))

    async def vote(self, client_id: str, comparison_id: str, preference: Preference) -> Comparison | None:
        if (stored := self.rows.get((client_id, comparison_id))) is None:
            return None
        vote = Vote(preference=preference, at=datetime.now(UTC))
        voted = msgspec.structs.replace(stored, preference=preference, voted_at=vote.at, votes=[*stored.votes, vote])
        self.rows[(client_id, comparison_id)] = voted
        return voted

    async def settle(self, client_id: str, conversation_id: str) -> None:
        for (owner, comparison_id), comparison in self.rows.items():
            if owner == client_id and comparison.conversation_id == conversation_id and comparison.preference:
                for side in ("A", "B"):
                    self.answers.pop((owner, comparison_id, side), None)

    async def pending(self, client_id: str, conversation_id: str) -> str | None:
        return next(
            (
                comparison.id
                for (owner, _), comparison in self.rows.items()
                if owner == client_id
                and comparison.conversation_id == conversation_id
                and comparison.preference is None
            ),
            None,
        )

    async def counts(self) -> list[tuple[str, str, str | None, int]]:
        counted = Counter((c.a.profile, c.b.profile, c.preference) for c in self.rows.values())
        return [(a, b, preference, count) for (a, b, preference), count in counted.items()]

    async def delete_conversation(self, client_id: str, conversation_id: str) -> list[str]:
        gone = [key for key, c in self.rows.items() if key[0] == client_id and c.conversation_id == conversation_id]
        for key in gone:
            del self.rows[key]
            for side in ("A", "B"):
                self.answers.pop((*key, side), None)
        return [comparison_id for _, comparison_id in gone]
