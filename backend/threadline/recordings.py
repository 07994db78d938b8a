"""Resumable streams: each running answer's UI Message Stream is recorded, so a reader that comes later (a
reloaded page, a second device, another process) replays it from its first chunk and follows it live.

In the process that runs the answer, readers follow its recording in memory. Every FLUSH_EVERY seconds
what is new is written to PostgreSQL as one row (`stream_chunks`), never a row per token, and readers in
other processes poll for rows. Once the answer has ended and is saved, its rows are deleted after
KEEP_AFTER_END seconds, long enough for a reader that is still replaying. With the in-memory backend
there is no table, and only this process can resume its answers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from threadline import events as ev
from threadline.encoders.ui_message_stream import DONE, encode_event
from threadline.fallback import CONNECTION_ERRORS
from threadline.postgres_saver import Pool

log = logging.getLogger("threadline.recordings")

FLUSH_EVERY = 0.1  # seconds between writes of what a running answer added
POLL_EVERY = 0.1  # seconds between reads of another process's recording
KEEP_AFTER_END = 30.0  # seconds a finished recording stays for readers still replaying it
START_WAIT = 2.0  # seconds to wait for the first chunk of an answer another process has just started
STALE_AFTER = 3600.0  # seconds after which rows an ended process left behind are removed


class Recording:
    """One answer's stream as it was sent: its bytes in memory, written out in batches."""

    def __init__(self, recordings: Recordings, thread_id: str, message_id: str) -> None:
        self.recordings = recordings
        self.thread_id = thread_id
        self.message_id = message_id
        self.chunks: list[bytes] = []
        self.ended = False
        self._changed = asyncio.Event()
        self._written = 0  # how many chunks are in the table
        self._writer: asyncio.Task[None] | None = None

    def add(self, events: list[ev.Event]) -> None:
        first = not self.chunks
        if first:  # the answer started: readers can find it now
            self.recordings.running[self.thread_id] = self
        self.chunks.append(b"".join([encode_event(event) for event in events]))
        self._changed.set()
        if self.recordings.pool is not None and self._writer is None:
            # The start at once, so other processes see the answer; then a write per FLUSH_EVERY at most.
            delay = 0.0 if first else FLUSH_EVERY
            self._writer = asyncio.get_running_loop().create_task(self._write_soon(delay))

    def end(self) -> None:
        self.chunks.append(DONE)
        self.ended = True
        self._changed.set()
        if self.recordings.running.get(self.thread_id) is self:
            del self.recordings.running[self.thread_id]
        if self.recordings.pool is not None:
            self.recordings.keep(self._write_last())

    async def follow(self) -> AsyncIterator[bytes]:
        """Everything recorded so far, then each new batch until the answer ends."""
        sent = 0
        while True:
            if sent < len(self.chunks):
                batch = self.chunks[sent:]
                sent += len(batch)
                yield b"".join(batch)
            elif self.ended:
                return
            else:
                self._changed.clear()
                await self._changed.wait()

    async def _write_soon(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._writer = None
        await self._write()

    async def _write_last(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
        await self._write()
        await asyncio.sleep(KEEP_AFTER_END)
        await self.recordings.forget(self.thread_id, self.message_id)

    async def _write(self) -> None:
        new = self.chunks[self._written :]
        if not new:
            return
        seq, self._written = self._written, len(self.chunks)
        await self.recordings.write(self.thread_id, self.message_id, seq, b"".join(new), self.ended)


class Recordings:
    """The recordings of this process's running answers, and the way to read any process's."""

    def __init__(self, pool: Pool | None) -> None:
        self.pool = pool
        self.running: dict[str, Recording] = {}  # by thread
        self.tasks: set[asyncio.Task[None]] = set()

    def start(self, thread_id: str, message_id: str) -> Recording:
        """A recording for an answer about to start; readers find it once it has its first chunk."""
        return Recording(self, thread_id, message_id)

    def keep(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def write(self, thread_id: str, message_id: str, seq: int, data: bytes, ended: bool) -> None:
        assert self.pool is not None, "written only with a database"
        try:
            async with self.pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO stream_chunks (thread_id, message_id, seq, data, ended) VALUES (%s, %s, %s, %s, %s)",
                    (thread_id, message_id, seq, data, ended),
                )
        except CONNECTION_ERRORS as exc:
            log.warning("could not record a stream for resuming (%s); it resumes in this process only", exc)

    async def forget(self, thread_id: str, message_id: str) -> None:
        assert self.pool is not None, "rows exist only with a database"
        try:
            async with self.pool.connection() as conn:
                await conn.execute(
                    "DELETE FROM stream_chunks WHERE (thread_id = %s AND message_id = %s) "
                    "OR created_at < now() - make_interval(secs => %s)",
                    (thread_id, message_id, STALE_AFTER),
                )
        except CONNECTION_ERRORS as exc:
            log.warning("could not delete a finished stream recording (%s)", exc)

    async def resume(self, thread_id: str) -> AsyncIterator[bytes] | None:
        """The answer running in this conversation, from its first chunk; None when none is running."""
        if (recording := self.running.get(thread_id)) is not None:
            return recording.follow()
        if self.pool is None:
            return None
        for _ in range(int(START_WAIT / POLL_EVERY)):
            async with self.pool.connection() as conn:
                cursor = await conn.execute(
                    "SELECT message_id, bool_or(ended) AS ended FROM stream_chunks WHERE thread_id = %s "
                    "GROUP BY message_id ORDER BY max(created_at) DESC LIMIT 1",
                    (thread_id,),
                )
                row = await cursor.fetchone()
                if row is not None and not row["ended"]:
                    return self._poll(thread_id, row["message_id"])
                # An answer that has just started elsewhere may not have written its first chunk yet.
                cursor = await conn.execute("SELECT 1 FROM active_turns WHERE thread_id = %s", (thread_id,))
                if await cursor.fetchone() is None:
                    return None
            await asyncio.sleep(POLL_EVERY)
        return None

    async def _poll(self, thread_id: str, message_id: str) -> AsyncIterator[bytes]:
        """Another process's recording: its rows so far, then new ones as they are written."""
        assert self.pool is not None, "polled only with a database"
        seq, quiet = -1, 0.0
        while quiet < STALE_AFTER / 60:  # a process that died mid-answer writes no more
            quiet += POLL_EVERY
            async with self.pool.connection() as conn:
                cursor = await conn.execute(
                    "SELECT seq, data, ended FROM stream_chunks WHERE thread_id = %s AND message_id = %s AND seq > %s "
                    "ORDER BY seq",
                    (thread_id, message_id, seq),
                )
                rows = await cursor.fetchall()
            for row in rows:
                seq, quiet = row["seq"], 0.0
                yield bytes(row["data"])
                if row["ended"]:
                    return
            await asyncio.sleep(POLL_EVERY)
