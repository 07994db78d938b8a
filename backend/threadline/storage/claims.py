"""A visitor who signs in takes the conversations of their anonymous identity (POST /api/account/claim).

Everything the anonymous id owns moves to the user at once: the conversation rows, their checkpoints and
recorded streams (whose thread ids are scoped by owner, conversations/state.py), traces, feedback,
comparisons, the files they use, and what agents remember of the visitor in the store. In PostgreSQL that is one
transaction, so a claim is whole or nothing.
Afterwards the anonymous id owns none of it, and the claim is recorded: the id stays the user's, and another
account presenting it is refused. A conversation whose id the user already has stays where it is and is
reported as skipped.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from threadline.refusals import Refused
from threadline.storage.threads import branch_of, thread_of


class Claimed(msgspec.Struct, rename="camel"):
    conversations: list[str]  # now the user's
    skipped: list[str]  # the user already has a conversation with this id: it stays with the anonymous id


def claimed_by_another() -> Refused:
    return Refused("FORBIDDEN", "These conversations were already claimed by another account.")


# Recording a visitor's running answer (answers/active.py, shared) and claiming their conversations (exclusive)
# take turns on this lock, so a claim never moves a conversation whose answer is starting.
VISITOR_LOCK = "hashtext('active:' || %(client)s)"


def threads_of(owner: str, conversation_ids: list[str], comparisons: list[tuple[str, str]]) -> list[str]:
    """The checkpointer threads of these conversations: each one's own, and those of its A/B answers."""
    own = [thread_of(owner, id_) for id_ in conversation_ids]
    return own + [
        branch_of(thread_of(owner, conversation_id), comparison_id, side)
        for conversation_id, comparison_id in comparisons
        for side in "AB"
    ]


class Claims(Protocol):
    async def claim(self, anonymous_id: str, principal: str) -> Claimed: ...
