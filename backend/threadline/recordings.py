"""Resumable streams: each running answer's UI Message Stream is recorded, so a reader that comes later (a
reloaded page, a second device, another process) replays it from its first chunk and follows it live.

In the process that runs the answer, readers follow its recording in memory. Every FLUSH_EVERY seconds
what is new in every running answer is written to PostgreSQL (`stream_chunks`) in one statement, never a
row per token, and readers in other processes poll for rows. Once the answer has ended and is saved, its
rows are deleted after KEEP_AFTER_END seconds, long enough for a reader that is still replaying. With the
in-memory backend there is no table, and only this process can resume its answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

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
        self.written = 0  # how many chunks are in the table

    def add(self, events: list[ev.Event]) -> None:
        if not self.chunks:  # the answer started: readers can find it now
            self.recordings.running[self.thread_id] = self
        self.chunks.append(b"".join([encode_event(event) for event in events]))
        self._changed.set()
        self.recordings.changed(self)

    def end(self) -> None:
        self.chunks.append(DONE)
        self.ended = True
        self._changed.set()
        if self.recordings.running.get(self.thread_id) is self:
            del self.recordings.running[self.thread_id]
        self.recordings.changed(self)

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


class Recordings:
    """The recordings of this process's running answers, and the way to read any process's.

    One writer per process: every FLUSH_EVERY seconds, what all running answers added goes to the table in
    one multi-row INSERT, so the writes do not grow with the number of answers streaming at once."""

    def __init__(self, pool: Pool | None) -> None:
        self.pool = pool
        self.running: dict[str, Recording] = {}  # by thread
        self.unwritten: set[Recording] = set()
        self.finished: list[tuple[float, str, str]] = []  # (when, thread, message) of written-out recordings
        self.tasks: set[asyncio.Task[None]] = set()
        self._writer: asyncio.Task[None] | None = None

    def start(self, thread_id: str, message_id: str) -> Recording:
        """A recording for an answer about to start; readers find it once it has its first chunk."""
        return Recording(self, thread_id, message_id)

    def changed(self, recording: Recording) -> None:
        if self.pool is None:
            return
        self.unwritten.add(recording)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_while_needed())
            self.tasks.add(self._writer)
            self._writer.add_done_callback(self.tasks.discard)

    async def _write_while_needed(self) -> None:
        while self.unwritten or self.finished:
            await asyncio.sleep(FLUSH_EVERY)
            try:
                await self._write()
            except CONNECTION_ERRORS as exc:
                log.warning("could not record streams for resuming (%s); they resume in this process only", exc)

    async def _write(self) -> None:
        assert self.pool is not None, "written only with a database"
        rows = []
        for recording in self.unwritten:
            new = recording.chunks[recording.written :]
            if new:
                rows.append(
                    (recording.thread_id, recording.message_id, recording.written, b"".join(new), recording.ended)
                )
                recording.written = len(recording.chunks)
            if recording.ended:
                self.finished.append((time.monotonic(), recording.thread_id, recording.message_id))
        self.unwritten.clear()
        now = time.monotonic()
        expired = [(thread, message) for when, thread, message in self.finished if now - when > KEEP_AFTER_END]
        self.finished = [entry for entry in self.finished if now - entry[0] <= KEEP_AFTER_END]
        if not rows and not expired:
            return
        async with self.pool.connection() as conn:
            if rows:
                async with conn.cursor() as cursor:
                    await cursor.executemany(
                        "INSERT INTO stream_chunks (thread_id, message_id, seq, data, ended) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        rows,
                    )
            if expired:  # and rows an ended process left behind
                await conn.execute(
                    "DELETE FROM stream_chunks WHERE (thread_id, message_id) IN "
                    "(SELECT * FROM unnest(%s::text[], %s::text[])) OR created_at < now() - make_interval(secs => %s)",
                    ([thread for thread, _ in expired], [message for _, message in expired], STALE_AFTER),
                )

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
