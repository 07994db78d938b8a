"""The files in PostgreSQL (the protocol and shared types: storage/file_store.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from psycopg.rows import DictRow

from threadline.storage.file_store import COLUMNS, StoredFile, file_of, storage_full
from threadline.storage.saver import Pool


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
