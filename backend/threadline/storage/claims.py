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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec
import psycopg
from langgraph.checkpoint.memory import InMemorySaver
from psycopg.rows import DictRow

from threadline.refusals import Refused, busy
from threadline.storage.comparisons import MemoryComparisons
from threadline.storage.conversation_list import MemoryConversations, StorageLimits
from threadline.storage.feedback import MemoryFeedback
from threadline.storage.file_store import MemoryFiles, storage_full
from threadline.storage.saver import Pool
from threadline.storage.shares import MemoryShares
from threadline.storage.threads import branch_of, thread_of
from threadline.storage.traces import MemoryTraces


class Claimed(msgspec.Struct, rename="camel"):
    conversations: list[str]  # now the user's
    skipped: list[str]  # the user already has a conversation with this id: it stays with the anonymous id


def claimed_by_another() -> Refused:
    return Refused("FORBIDDEN", "These conversations were already claimed by another account.")


# Recording a visitor's running answer (answers/active.py, shared) and claiming their conversations (exclusive)
# take turns on this lock, so a claim never moves a conversation whose answer is starting.
VISITOR_LOCK = "hashtext('active:' || %(client)s)"
# Rows keyed by the thread (owner and conversation id), moved by rewriting the owner part.
THREAD_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "recorded_events")
# Rows keyed by owner, moved with their conversation.
OWNED_TABLES = ("traces", "feedback", "comparisons", "file_uses", "shares")
# The files those conversations use become the user's too (kept by the anonymous id only if it still uses them).
CLAIMED_FILES = "SELECT file_id FROM file_uses WHERE client_id = %(principal)s AND conversation_id = ANY(%(ids)s)"
MOVE_FILES = (
    "INSERT INTO files (client_id, id, sha256, media_type, filename, size, created_at) "
    "SELECT %(principal)s, id, sha256, media_type, filename, size, created_at FROM files "
    f"WHERE client_id = %(anonymous)s AND id IN ({CLAIMED_FILES}) ON CONFLICT DO NOTHING",
    f"DELETE FROM files f WHERE client_id = %(anonymous)s AND id IN ({CLAIMED_FILES}) AND NOT EXISTS "
    "(SELECT 1 FROM file_uses u WHERE u.client_id = f.client_id AND u.file_id = f.id)",
)


# What agents remember of the visitor (LangGraph's store, namespaced by who asks as the agents guide recommends:
# `("memories", user_id)`) becomes the user's too: the anonymous id is replaced in every namespace that has it as a
# label. An item the user already has under that name stays the user's; one with embeddings (an indexed store's
# rows in store_vectors, which reference it) stays where it is.
NEW_PREFIX = (
    "array_to_string(array_replace(string_to_array(s.prefix, '.'), %(anonymous)s::text, %(principal)s::text), '.')"
)
MOVE_MEMORIES = (
    f"UPDATE store s SET prefix = {NEW_PREFIX}, updated_at = now() "
    "WHERE %(anonymous)s::text = ANY(string_to_array(s.prefix, '.')) "
    f"AND NOT EXISTS (SELECT 1 FROM store t WHERE t.prefix = {NEW_PREFIX} AND t.key = s.key)"
)
WITHOUT_VECTORS = " AND NOT EXISTS (SELECT 1 FROM store_vectors v WHERE v.prefix = s.prefix AND v.key = s.key)"


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


class PostgresClaims:
    def __init__(self, pool: Pool, limits: StorageLimits, file_quota: int) -> None:
        self.pool = pool
        self.limits = limits
        self.file_quota = file_quota  # FILE_QUOTA_BYTES: the files a claim brings count toward the user's

    async def claim(self, anonymous_id: str, principal: str) -> Claimed:
        async with self.pool.connection() as conn, conn.transaction():
            await self._hold(conn, anonymous_id, principal)
            rows = await (
                await conn.execute(
                    "SELECT id, EXISTS (SELECT 1 FROM conversations mine WHERE mine.client_id = %s AND mine.id = c.id)"
                    " AS taken FROM conversations c WHERE c.client_id = %s ORDER BY c.last_message_at",
                    (principal, anonymous_id),
                )
            ).fetchall()
            moving = [row["id"] for row in rows if not row["taken"]]
            count = await (
                await conn.execute("SELECT count(*) AS n FROM conversations WHERE client_id = %s", (principal,))
            ).fetchone()
            if moving and (count["n"] if count else 0) + len(moving) > self.limits.conversations_per_visitor:
                raise self.limits.too_many_conversations()
            moved = {"anonymous": anonymous_id, "principal": principal, "ids": moving}
            await conn.execute(
                "UPDATE conversations SET client_id = %(principal)s "
                "WHERE client_id = %(anonymous)s AND id = ANY(%(ids)s)",
                moved,
            )
            compared = await (
                await conn.execute(
                    "SELECT id, conversation_id FROM comparisons WHERE client_id = %(anonymous)s "
                    "AND conversation_id = ANY(%(ids)s)",
                    moved,
                )
            ).fetchall()
            pairs = [(row["conversation_id"], row["id"]) for row in compared]
            threads = moved | {"threads": threads_of(anonymous_id, moving, pairs)}
            for table in THREAD_TABLES:
                await conn.execute(
                    f"UPDATE {table} SET thread_id = %(principal)s || substr(thread_id, length(%(anonymous)s) + 1) "
                    "WHERE thread_id = ANY(%(threads)s)",
                    threads,
                )
            for table in OWNED_TABLES:
                await conn.execute(
                    f"UPDATE {table} SET client_id = %(principal)s "
                    "WHERE client_id = %(anonymous)s AND conversation_id = ANY(%(ids)s)",
                    moved,
                )
            for statement in MOVE_FILES:
                await conn.execute(statement, moved)
            vectors = await (await conn.execute("SELECT to_regclass('store_vectors') IS NOT NULL AS v")).fetchone()
            await conn.execute(MOVE_MEMORIES + (WITHOUT_VECTORS if vectors and vectors["v"] else ""), moved)
            used = await (
                await conn.execute("SELECT coalesce(sum(size), 0) AS n FROM files WHERE client_id = %s", (principal,))
            ).fetchone()
            if moving and used and used["n"] > self.file_quota:
                raise storage_full(self.file_quota)
        return Claimed(moving, [row["id"] for row in rows if row["taken"]])

    @staticmethod
    async def _hold(conn: psycopg.AsyncConnection[DictRow], anonymous_id: str, principal: str) -> None:
        """Record the claim (refused when another account made it), then hold the anonymous identity's answers:
        they are recorded under this lock (answers/active.py), so the claim is refused while one runs, and one
        starting meanwhile waits, and writes its conversation after the claim."""
        await conn.execute(
            "INSERT INTO claims (anonymous_id, principal) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (anonymous_id, principal),
        )
        owner = await (
            await conn.execute("SELECT principal FROM claims WHERE anonymous_id = %s FOR UPDATE", (anonymous_id,))
        ).fetchone()
        if owner is None or owner["principal"] != principal:
            raise claimed_by_another()
        await conn.execute(f"SELECT pg_advisory_xact_lock({VISITOR_LOCK})", {"client": anonymous_id})
        running = await conn.execute("SELECT 1 FROM active_turns WHERE client_id = %s LIMIT 1", (anonymous_id,))
        if await running.fetchone() is not None:
            raise busy()


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
