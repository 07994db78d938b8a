"""The checkpointer's threads: which thread holds a visitor's conversation, and its A/B answers beside it."""

from __future__ import annotations


def thread_of(client_id: str, conversation_id: str) -> str:
    """The checkpointer's thread for a visitor's conversation: ids are scoped per visitor, so two visitors'
    `my-first-chat` are two conversations, and nobody can reach, claim or probe another visitor's id."""
    return f"{client_id}:{conversation_id}"


def branches_of(thread_id: str) -> str:
    """What the threads of a conversation's A/B answers begin with."""
    return f"{thread_id}:ab:"


def branch_of(thread_id: str, comparison_id: str, side: str) -> str:
    """The thread of one answer of an A/B comparison, beside its conversation's own."""
    return f"{branches_of(thread_id)}{comparison_id}:{side}"
