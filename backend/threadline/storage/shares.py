"""Read-only links to a conversation: a snapshot of its messages as they were when shared, under an unguessable
id, readable by anyone with the link and by nobody without it (no list, no search, no way to continue it).

One link per conversation: sharing again brings the snapshot up to date under the same id; revoking deletes it,
and the link is a 404 from then on, as for a conversation deleted with its link. The snapshot leaves out what
is the owner's alone (the conversation's id, ratings, traces) and names each attached file by a URL of the
link's own, which serves only the files the snapshot shows.
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import UTC, datetime
from typing import Any, Protocol

import msgspec

from threadline import mount_path
from threadline.storage.saver import Pool

# The owner's alone, and the versions: a link shows only the branch that was shown.
PRIVATE_METADATA = ("conversationId", "traceId", "feedback", "comparisonId", "version", "versions")
FILE_URL = re.compile(r"^/api/files/([0-9a-f]{32})$")


class Share(msgspec.Struct, rename="camel", frozen=True):
    """A conversation's link: its id, where the page shows it, and when the snapshot was taken."""

    id: str
    conversation_id: str
    url: str
    shared_at: datetime


class Shared(msgspec.Struct, rename="camel", frozen=True):
    """What a link shows: the title and the messages as they were."""

    title: str
    shared_at: datetime
    messages: list[dict[str, Any]]


def snapshot(share_id: str, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The messages as a link shows them, and the ids of the files they show."""
    files: list[str] = []
    shown = []
    for message in messages:
        metadata = {key: value for key, value in message.get("metadata", {}).items() if key not in PRIVATE_METADATA}
        parts = []
        for part in message["parts"]:
            if (match := FILE_URL.match(mount_path.local(str(part.get("url", ""))))) is not None:
                files.append(match.group(1))
                part = part | {"url": mount_path.url(f"/api/shared/{share_id}/files/{match.group(1)}")}
            parts.append(part)
        shown.append(message | {"metadata": metadata, "parts": parts})
    return shown, files


def new_share_id() -> str:
    return secrets.token_urlsafe(18)  # 144 bits: not to be guessed


def page_url(share_id: str) -> str:
    return mount_path.url(f"/share/{share_id}")


class ShareStore(Protocol):
    async def share(
        self, client_id: str, conversation_id: str, title: str, messages: list[dict[str, Any]]
    ) -> Share: ...

    async def of_conversation(self, client_id: str, conversation_id: str) -> Share | None: ...

    async def revoke(self, client_id: str, conversation_id: str) -> bool: ...

    async def shared(self, share_id: str) -> tuple[str, Shared, list[str]] | None: ...

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None: ...


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


class MemoryShares:
    """The same in memory, for CHAT_MEMORY_BACKEND=memory."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], tuple[Share, Shared, list[str]]] = {}  # by (owner, conversation id)

    async def share(self, client_id: str, conversation_id: str, title: str, messages: list[dict[str, Any]]) -> Share:
        known = self.rows.get((client_id, conversation_id))
        share_id = known[0].id if known else new_share_id()
        shown, files = snapshot(share_id, messages)
        now = datetime.now(UTC)
        share = Share(share_id, conversation_id, page_url(share_id), now)
        self.rows[(client_id, conversation_id)] = (share, Shared(title, now, shown), files)
        return share

    async def of_conversation(self, client_id: str, conversation_id: str) -> Share | None:
        known = self.rows.get((client_id, conversation_id))
        return known[0] if known else None

    async def revoke(self, client_id: str, conversation_id: str) -> bool:
        return self.rows.pop((client_id, conversation_id), None) is not None

    async def shared(self, share_id: str) -> tuple[str, Shared, list[str]] | None:
        for (owner, _), (share, shown, files) in self.rows.items():
            if secrets.compare_digest(share.id, share_id):
                return owner, shown, files
        return None

    async def delete_conversation(self, client_id: str, conversation_id: str) -> None:
        await self.revoke(client_id, conversation_id)
