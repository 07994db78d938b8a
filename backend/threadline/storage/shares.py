"""Read-only links to a conversation: a snapshot of its messages as they were when shared, under an unguessable
id, readable by anyone with the link and by nobody without it (no list, no search, no way to continue it).

One link per conversation: sharing again brings the snapshot up to date under the same id; revoking deletes it,
and the link is a 404 from then on, as for a conversation deleted with its link. The snapshot leaves out what
is the owner's alone (the conversation's id, ratings, traces) and names each attached file by a URL of the
link's own, which serves only the files the snapshot shows.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime
from typing import Any, Protocol

import msgspec

from threadline import mount_path

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
