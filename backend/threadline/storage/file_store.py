"""Attached files: each one's bytes stored once by content hash, and owned like conversations.

A file's id is the start of its SHA-256, so the same file sent twice (by anyone) is stored once; who may
read it is a row per owner (another owner's id is a 404, like a missing one). The conversations that
use a file are recorded, so deleting the last of them deletes the file, and its bytes once nobody has
them. A checkpoint holds only the id (agent/attachments.py), never the bytes. The bytes live in PostgreSQL's
`file_blobs`, or, with FILE_STORE_URL=s3://bucket/prefix, in an S3-compatible object store (`S3Blobs`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg
from psycopg.rows import DictRow

from threadline import mount_path
from threadline.chores import hourly
from threadline.refusals import Refused
from threadline.storage.saver import Pool


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


class S3Blobs:
    """Files' bytes as objects named `<prefix>/<sha256>`, through the AWS SDK (boto3, in worker threads): its
    credentials and endpoint come from where the SDK reads them (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, a
    profile, a role)."""

    def __init__(self, url: str, client: Any) -> None:
        self.bucket, _, prefix = url.removeprefix("s3://").partition("/")
        self.prefix = f"{prefix}/" if prefix else ""
        self.client = client

    async def put(self, sha256: str, data: bytes) -> None:
        await asyncio.to_thread(self.client.put_object, Bucket=self.bucket, Key=self.prefix + sha256, Body=data)

    async def get(self, sha256: str) -> bytes | None:
        def read() -> bytes | None:
            try:
                response = self.client.get_object(Bucket=self.bucket, Key=self.prefix + sha256)
            except self.client.exceptions.NoSuchKey:
                return None
            data: bytes = response["Body"].read()
            return data

        return await asyncio.to_thread(read)

    async def delete(self, sha256s: list[str]) -> None:
        if sha256s:
            objects = [{"Key": self.prefix + sha256} for sha256 in sha256s]
            delete = {"Objects": objects, "Quiet": True}
            await asyncio.to_thread(self.client.delete_objects, Bucket=self.bucket, Delete=delete)


def s3_blobs(url: str) -> S3Blobs:
    import boto3  # the s3 extra, checked at start-up (settings.py)

    return S3Blobs(url, boto3.client("s3"))


class PostgresFiles:
    """Files in PostgreSQL, their bytes too unless `blobs` (an object store) keeps them."""

    def __init__(self, pool: Pool, quota: int, blobs: S3Blobs | None = None) -> None:
        self.pool = pool
        self.quota = quota  # bytes of one owner's files
        self.blobs = blobs

    async def save(self, owner: str, data: bytes, media_type: str, filename: str) -> StoredFile:
        file = file_of(data, media_type, filename)
        if (known := await self.get(owner, file.id)) is not None:
            return known
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (owner,))  # one quota check at a time
            await _lock_blobs(conn, [file.sha256])  # a deletion of the same bytes waits, or is waited for
            row = await (
                await conn.execute("SELECT coalesce(sum(size), 0) AS used FROM files WHERE client_id = %s", (owner,))
            ).fetchone()
            if (row["used"] if row else 0) + file.size > self.quota:
                raise storage_full(self.quota)
            if self.blobs is not None:  # the bytes before the row that names them: never a row without its bytes
                await self.blobs.put(file.sha256, data)
            else:
                await conn.execute(
                    "INSERT INTO file_blobs (sha256, data) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    (file.sha256, data),
                )
            await conn.execute(
                "INSERT INTO files (client_id, id, sha256, media_type, filename, size) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (owner, file.id, file.sha256, file.media_type, file.filename, file.size),
            )
        return file

    async def get(self, owner: str, file_id: str) -> StoredFile | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {COLUMNS} FROM files WHERE client_id = %s AND id = %s", (owner, file_id)
            )
            row = await cursor.fetchone()
        return None if row is None else StoredFile(**row)

    async def read(self, sha256: str) -> bytes | None:
        if self.blobs is not None:
            return await self.blobs.get(sha256)
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT data FROM file_blobs WHERE sha256 = %s", (sha256,))
            row = await cursor.fetchone()
        return None if row is None else bytes(row["data"])

    async def use(self, owner: str, file_ids: list[str], conversation_id: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO file_uses (client_id, file_id, conversation_id) "
                "SELECT %s, unnest(%s::text[]), %s ON CONFLICT DO NOTHING",
                (owner, file_ids, conversation_id),
            )

    async def delete_conversation(self, owner: str, conversation_id: str) -> None:
        """Forget the conversation's use of its files; a file no conversation uses goes, and its bytes with it
        once no owner has them."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "DELETE FROM file_uses WHERE client_id = %s AND conversation_id = %s RETURNING file_id",
                (owner, conversation_id),
            )
            used = [row["file_id"] for row in await cursor.fetchall()]
            cursor = await conn.execute(
                f"DELETE FROM files f WHERE client_id = %s AND id = ANY(%s) AND {UNUSED} RETURNING sha256",
                (owner, used),
            )
            await self._drop_blobs(conn, [row["sha256"] for row in await cursor.fetchall()])

    async def drop_unused(self, older_than: float) -> int:
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                f"DELETE FROM files f WHERE created_at < now() - make_interval(secs => %s) AND {UNUSED} "
                "RETURNING sha256",
                (older_than,),
            )
            gone = [row["sha256"] for row in await cursor.fetchall()]
            await self._drop_blobs(conn, gone)
        return len(gone)

    async def _drop_blobs(self, conn: psycopg.AsyncConnection[DictRow], candidates: list[str]) -> None:
        """Delete, in the caller's transaction, the bytes of these that no file names any more; under their
        locks, so a file saved with the same bytes meanwhile keeps them."""
        await _lock_blobs(conn, candidates)
        cursor = await conn.execute(
            "SELECT gone.sha AS sha256 FROM unnest(%s::text[]) AS gone(sha) "
            "WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.sha256 = gone.sha)",
            (candidates,),
        )
        unused = [row["sha256"] for row in await cursor.fetchall()]
        if self.blobs is not None:
            await self.blobs.delete(unused)
        else:
            await conn.execute("DELETE FROM file_blobs WHERE sha256 = ANY(%s)", (unused,))


# A file no conversation of its owner uses.
UNUSED = "NOT EXISTS (SELECT 1 FROM file_uses u WHERE u.client_id = f.client_id AND u.file_id = f.id)"


async def _lock_blobs(conn: psycopg.AsyncConnection[DictRow], sha256s: list[str]) -> None:
    """Transaction locks on these bytes, in one order, so savers and deleters of the same bytes take turns."""
    for sha256 in sorted(set(sha256s)):
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"blob:{sha256}",))


@dataclass
class MemoryFiles:
    """The same in process memory, for CHAT_MEMORY_BACKEND=memory."""

    quota: int = 1 << 50  # bytes of one owner's files
    files: dict[tuple[str, str], StoredFile] = field(default_factory=dict)  # (owner, id) →
    blobs: dict[str, bytes] = field(default_factory=dict)  # sha256 → bytes
    uses: set[tuple[str, str, str]] = field(default_factory=set)  # (owner, file id, conversation id)
    saved_at: dict[tuple[str, str], float] = field(default_factory=dict)  # (owner, id) → monotonic seconds

    async def save(self, owner: str, data: bytes, media_type: str, filename: str) -> StoredFile:
        file = file_of(data, media_type, filename)
        if (known := self.files.get((owner, file.id))) is not None:
            return known
        if sum(stored.size for (who, _), stored in self.files.items() if who == owner) + file.size > self.quota:
            raise storage_full(self.quota)
        self.blobs.setdefault(file.sha256, data)
        self.files[(owner, file.id)] = file
        self.saved_at[(owner, file.id)] = time.monotonic()
        return file

    async def get(self, owner: str, file_id: str) -> StoredFile | None:
        return self.files.get((owner, file_id))

    async def read(self, sha256: str) -> bytes | None:
        return self.blobs.get(sha256)

    async def use(self, owner: str, file_ids: list[str], conversation_id: str) -> None:
        self.uses.update((owner, file_id, conversation_id) for file_id in file_ids)

    async def delete_conversation(self, owner: str, conversation_id: str) -> None:
        used = {file_id for who, file_id, used_in in self.uses if (who, used_in) == (owner, conversation_id)}
        self.uses -= {(owner, file_id, conversation_id) for file_id in used}
        for file_id in used - {file_id for who, file_id, _ in self.uses if who == owner}:
            self._forget(owner, file_id)

    async def drop_unused(self, older_than: float) -> int:
        used = {(owner, file_id) for owner, file_id, _ in self.uses}
        cutoff = time.monotonic() - older_than
        old = [key for key, saved in self.saved_at.items() if saved < cutoff and key not in used]
        for owner, file_id in old:
            self._forget(owner, file_id)
        return len(old)

    def _forget(self, owner: str, file_id: str) -> None:
        self.saved_at.pop((owner, file_id), None)
        if (gone := self.files.pop((owner, file_id), None)) is None:
            return
        if not any(stored.sha256 == gone.sha256 for stored in self.files.values()):
            self.blobs.pop(gone.sha256, None)
