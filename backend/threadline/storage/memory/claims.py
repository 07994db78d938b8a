"""The claims of an anonymous visitor's conversations in process memory, for CHAT_MEMORY_BACKEND=memory (the
protocol: storage/claims.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from threadline.storage.claims import Claimed, claimed_by_another, threads_of
from threadline.storage.file_store import storage_full
from threadline.storage.memory.comparisons import MemoryComparisons
from threadline.storage.memory.conversation_list import MemoryConversations
from threadline.storage.memory.feedback import MemoryFeedback
from threadline.storage.memory.file_store import MemoryFiles
from threadline.storage.memory.shares import MemoryShares
from threadline.storage.memory.traces import MemoryTraces


@dataclass
class MemoryClaims:
    """The same for CHAT_MEMORY_BACKEND=memory: the memory stores' entries are re-keyed in one step."""

    checkpointer: InMemorySaver
    conversations: MemoryConversations
    traces: MemoryTraces
    feedback: MemoryFeedback
    comparisons: MemoryComparisons
    files: MemoryFiles
    shares: MemoryShares
    file_quota: int = 1 << 50

    def __post_init__(self) -> None:
        self.claimed: dict[str, str] = {}

    async def claim(self, anonymous_id: str, principal: str) -> Claimed:
        if self.claimed.setdefault(anonymous_id, principal) != principal:
            raise claimed_by_another()
        conversations, limits = self.conversations, self.conversations.limits
        theirs = sorted(
            (row for (owner, _), (_, row) in conversations.rows.items() if owner == anonymous_id),
            key=lambda row: row.last_message_at,
        )
        moving = [row.id for row in theirs if (principal, row.id) not in conversations.rows]
        if moving and conversations.counts.get(principal, 0) + len(moving) > limits.conversations_per_visitor:
            raise limits.too_many_conversations()
        ids = set(moving)
        self._check_file_quota(anonymous_id, principal, ids)
        compared = [
            (comparison.conversation_id, comparison_id)
            for (owner, comparison_id), comparison in self.comparisons.rows.items()
            if owner == anonymous_id and comparison.conversation_id in ids
        ]
        for thread_id in threads_of(anonymous_id, moving, compared):
            self._move_thread(thread_id, principal + thread_id.removeprefix(anonymous_id))
        _rekey(conversations.rows, anonymous_id, principal, lambda key, _: key[1] in ids)
        _rekey(conversations.words, anonymous_id, principal, lambda key, _: key[1] in ids)
        _rekey(self.shares.rows, anonymous_id, principal, lambda key, _: key[1] in ids)
        conversations.counts[principal] = conversations.counts.get(principal, 0) + len(moving)
        if left := conversations.counts.pop(anonymous_id, 0) - len(moving):
            conversations.counts[anonymous_id] = left
        for trace in self.traces.rows.values():
            if trace.owner == anonymous_id and trace.conversation_id in ids:
                trace.owner = principal
        _rekey(self.feedback.rows, anonymous_id, principal, lambda _, value: value[0] in ids)
        comparison_ids = {comparison_id for _, comparison_id in compared}
        _rekey(self.comparisons.rows, anonymous_id, principal, lambda key, _: key[1] in comparison_ids)
        _rekey(self.comparisons.answers, anonymous_id, principal, lambda key, _: key[1] in comparison_ids)
        self._move_files(anonymous_id, principal, ids)
        return Claimed(moving, [row.id for row in theirs if row.id not in ids])

    def _check_file_quota(self, old: str, new: str, conversation_ids: set[str]) -> None:
        files = self.files
        used = sum(stored.size for (who, _), stored in files.files.items() if who == new)
        coming = {file_id for who, file_id, used_in in files.uses if who == old and used_in in conversation_ids}
        used += sum(
            files.files[(old, id_)].size
            for id_ in coming
            if (old, id_) in files.files and (new, id_) not in files.files
        )
        if used > self.file_quota:
            raise storage_full(self.file_quota)

    def _move_files(self, old: str, new: str, conversation_ids: set[str]) -> None:
        files = self.files
        moving = {use for use in files.uses if use[0] == old and use[2] in conversation_ids}
        files.uses = (files.uses - moving) | {(new, file_id, conversation) for _, file_id, conversation in moving}
        still_used = {file_id for who, file_id, _ in files.uses if who == old}
        for _, file_id, _ in moving:
            if (old, file_id) in files.files:
                stored = files.files[(old, file_id)] if file_id in still_used else files.files.pop((old, file_id))
                files.files.setdefault((new, file_id), stored)
                files.saved_at.setdefault((new, file_id), files.saved_at.get((old, file_id), 0.0))

    def _move_thread(self, old: str, new: str) -> None:
        saver = self.checkpointer
        if old in saver.storage:
            saver.storage[new] = saver.storage.pop(old)
        tables: tuple[dict[Any, Any], ...] = (saver.writes, saver.blobs)  # keyed (thread id, …)
        for table in tables:
            _rekey(table, old, new, lambda _, __: True)


def _rekey(rows: dict[Any, Any], old: str, new: str, wanted: Callable[[Any, Any], bool]) -> None:
    """Move the entries keyed (`old`, …) that are `wanted` to (`new`, …)."""
    for key in [key for key, value in rows.items() if key[0] == old and wanted(key, value)]:
        rows[(new, *key[1:])] = rows.pop(key)
