"""The read-only links in process memory, for CHAT_MEMORY_BACKEND=memory (the protocol: storage/shares.py)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from threadline.storage.shares import Share, Shared, new_share_id, page_url, snapshot


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
