"""Attached files: each one's bytes stored once by content hash, and owned like conversations.

A file's id is the start of its SHA-256, so the same file sent twice (by anyone) is stored once; who may
read it is a row per owner (another owner's id is a 404, like a missing one). The conversations that
use a file are recorded, so deleting the last of them deletes the file, and its bytes once nobody has
them. A checkpoint holds only the id (agent/attachments.py), never the bytes. The bytes live in PostgreSQL's
`file_blobs`, or, with FILE_STORE_URL=s3://bucket/prefix, in an S3-compatible object store (`S3Blobs`).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Protocol

from threadline import mount_path
from threadline.chores import hourly
from threadline.refusals import Refused


@dataclass(frozen=True)
class StoredFile:
    id: str
    sha256: str
    media_type: str
    filename: str
    size: int

    @property
    def url(self) -> str:
        return mount_path.url(f"/api/files/{self.id}")


def storage_full(quota: int) -> Refused:
    return Refused("STORAGE_FULL", f"Your files would take more than {quota:,} bytes: delete a conversation first.")


def file_of(data: bytes, media_type: str, filename: str) -> StoredFile:
    digest = hashlib.sha256(data).hexdigest()
    return StoredFile(digest[:32], digest, media_type, filename, len(data))


class FileStore(Protocol):
    async def save(self, owner: str, data: bytes, media_type: str, filename: str) -> StoredFile:
        """The file, stored for `owner` (once: the same bytes again give the same file); STORAGE_FULL past the
        store's quota of the owner's files (FILE_QUOTA_BYTES)."""

    async def get(self, owner: str, file_id: str) -> StoredFile | None: ...

    async def read(self, sha256: str) -> bytes | None: ...

    async def use(self, owner: str, file_ids: list[str], conversation_id: str) -> None: ...

    async def delete_conversation(self, owner: str, conversation_id: str) -> None: ...

    async def drop_unused(self, older_than: float) -> int:
        """Delete the files no conversation uses (uploads never sent) older than `older_than` seconds."""
        ...


COLUMNS = "id, sha256, media_type, filename, size"
UNSENT_FOR = 24 * 3600.0  # an upload no message used is kept this long, then deleted

log = logging.getLogger(__name__)


async def keep_dropping_unused(files: FileStore) -> None:
    """Hourly, delete the uploads no message used within a day."""
    await hourly(
        lambda: files.drop_unused(UNSENT_FOR),
        "deleted %d uploaded files no message used",
        "could not delete unused uploads; will retry",
    )
