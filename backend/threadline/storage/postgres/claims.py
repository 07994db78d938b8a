"""The claims of an anonymous visitor's conversations in PostgreSQL (the protocol and shared types:
storage/claims.py)."""

from __future__ import annotations

import psycopg
from psycopg.rows import DictRow

from threadline.refusals import busy
from threadline.storage.claims import VISITOR_LOCK, Claimed, claimed_by_another, threads_of
from threadline.storage.conversation_list import StorageLimits
from threadline.storage.file_store import storage_full
from threadline.storage.saver import Pool

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
