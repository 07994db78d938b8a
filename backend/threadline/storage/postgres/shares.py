"""The read-only links in PostgreSQL (the protocol and shared types: storage/shares.py)."""

from __future__ import annotations

import json
from typing import Any

from threadline.storage.saver import Pool
from threadline.storage.shares import Share, Shared, new_share_id, page_url, snapshot


class PostgresShares:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def share(self, client_id: str, conversation_id: str, title: str, messages: list[dict[str, Any]]) -> Share:
        async with self.pool.connection() as conn, conn.transaction():
            row = await (
                await conn.execute(
                    "SELECT id FROM shares WHERE client_id = %s AND conversation_id = %s FOR UPDATE",
                    (client_id, conversation_id),
                )
            ).fetchone()
            share_id = row["id"] if row else new_share_id()
            shown, files = snapshot(share_id, messages)
            saved = await (
                await conn.execute(
                    "INSERT INTO shares (id, client_id, conversation_id, title, messages, files) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET title = excluded.title, "
                    "messages = excluded.messages, files = excluded.files, shared_at = now() RETURNING shared_at",
                    (share_id, client_id, conversation_id, title, json.dumps(shown), files),
                )
            ).fetchone()
        assert saved is not None, "an upsert returns its row"
        return Share(share_id, conversation_id, page_url(share_id), saved["shared_at"])

    async def of_conversation(self, client_id: str, conversation_id: str) -> Share | None:
        async with self.pool.connection() as conn:
            row = await (
                await conn.execute(
                    "SELECT id, shared_at FROM shares WHERE client_id = %s AND conversation_id = %s",
                    (client_id, conversation_id),
                )
            ).fetchone()
        return None if row is None else Share(row["id"], conversation_id, page_url(row["id"]), row["shared_at"])

    async def revoke(self, client_id: str, conversation_id: str) -> bool:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "DELETE FROM shares WHERE client_id = %s AND conversation_id = %s", (client_id, conversation_id)
            )
            return cursor.rowcount > 0

    async def shared(self, share_id: str) -> tuple[str, Shared, list[str]] | None:
        """The owner, what the link shows, and the files it may serve."""
        async with self.pool.connection() as conn:
            row = await (
                await conn.execute(
                    "SELECT client_id, title, shared_at, messages, files FROM shares WHERE id = %s", (share_id,)
                )
            ).fetchone()
        if row is None:
            return None
        return row["client_id"], Shared(row["title"], row["shared_at"], row["messages"]), row["files"]

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None:
        await self.revoke(client_id, conversation_id)
