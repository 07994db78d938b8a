"""A/B comparisons (seed 002): one user message answered by two model profiles, and the person's vote.

Answer A runs in the conversation itself; answer B runs on a branch, a copy of the conversation as it
was before the message (`conversation.branch_of`), so neither sees the other. Once an answer has ended,
its own messages and record are kept in the comparison (`kept`), and B's branch is deleted: a comparison
costs what its two answers cost, not a copy of the conversation. The vote makes the chosen answer the
conversation's continuation by putting its kept messages in place of the other's; once the conversation
moves on, no vote can change that any more and the kept messages go (the texts stay in the record). A record is one JSON
document in the `comparisons` table (or memory) under the visitor, with the profiles and the vote beside
it for counting; votes are appended in one statement each, so none is lost when several arrive at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, Protocol

import msgspec
from langchain_core.messages import AnyMessage, messages_to_dict

Side = Literal["A", "B"]
Preference = Literal["A", "B", "tie"]


class ComparedAnswer(msgspec.Struct, rename="camel", frozen=True):
    profile: str
    model: str
    message_id: str
    trace_id: str
    text: str | None = None  # None while it is being written
    finish_reason: str | None = None  # "stop", or "other"/"error" when it was stopped or failed


class Vote(msgspec.Struct, rename="camel", frozen=True):
    preference: Preference
    at: datetime


class Comparison(msgspec.Struct, rename="camel", frozen=True):
    id: str
    conversation_id: str
    user_message_id: str
    created_at: datetime
    a: ComparedAnswer
    b: ComparedAnswer
    preference: Preference | None = None
    voted_at: datetime | None = None
    votes: list[Vote] = []  # every vote, oldest first: voting again changes the preference

    def answer(self, side: Side) -> ComparedAnswer:
        return self.a if side == "A" else self.b

    @property
    def finished(self) -> bool:
        return self.a.text is not None and self.b.text is not None

    @property
    def chosen(self) -> Side:
        """The answer the conversation goes on with: B when voted B, else A (a tie, or no vote yet)."""
        return "B" if self.preference == "B" else "A"


def kept_answer(messages: list[AnyMessage], record: Mapping[str, Any]) -> dict[str, Any]:
    """What a comparison keeps of one answer to put it back in the conversation: its messages and record."""
    return {"messages": messages_to_dict(messages), "record": dict(record)}


class PairResult(msgspec.Struct, rename="camel", frozen=True):
    """One pair of profiles from `profile`'s side: how often its answer was preferred, and how often not."""

    profile: str
    opponent: str
    wins: int
    losses: int
    ties: int
    not_voted: int


def results(rows: list[tuple[str, str, str | None, int]], profile: str | None) -> list[PairResult]:
    """Counts per profile pair from (profile A, profile B, preference, count) rows; with `profile`, only its
    pairs, each seen from its side."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for a, b, preference, count in rows:
        outcome = {"A": "win", "B": "loss", "tie": "tie", None: "none"}[preference]
        if profile == b and profile != a:  # seen from B's side
            a, b, outcome = b, a, {"win": "loss", "loss": "win"}.get(outcome, outcome)
        counts[(a, b, outcome)] += count
    if profile is not None:
        counts = Counter({key: count for key, count in counts.items() if key[0] == profile})
    pairs = sorted({(a, b) for a, b, _ in counts})
    return [
        PairResult(
            profile=a,
            opponent=b,
            wins=counts[(a, b, "win")],
            losses=counts[(a, b, "loss")],
            ties=counts[(a, b, "tie")],
            not_voted=counts[(a, b, "none")],
        )
        for a, b in pairs
    ]


class ComparisonStore(Protocol):
    async def add(self, client_id: str, comparison: Comparison) -> None: ...

    async def get(self, client_id: str, comparison_id: str) -> Comparison | None: ...

    async def answered(
        self, client_id: str, comparison_id: str, side: Side, answer: ComparedAnswer, kept: dict[str, Any]
    ) -> None: ...

    async def kept(self, client_id: str, comparison_id: str, side: Side) -> dict[str, Any] | None: ...

    async def vote(self, client_id: str, comparison_id: str, preference: Preference) -> Comparison | None:
        """Add a vote, and make it the preference; the comparison as stored then."""
        ...

    async def pending(self, client_id: str, conversation_id: str) -> str | None:
        """The id of the conversation's comparison that waits for a vote, if one does."""
        ...

    async def settle(self, client_id: str, conversation_id: str) -> None:
        """Let go of the answers the conversation's voted comparisons kept for a change of mind."""
        ...

    async def counts(self) -> list[tuple[str, str, str | None, int]]: ...

    async def delete_conversation(self, client_id: str, conversation_id: str) -> list[str]:
        """Delete the conversation's comparisons; their ids, whose branches go too."""
        ...
