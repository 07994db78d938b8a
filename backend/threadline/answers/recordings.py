"""Resumable streams: each running answer's events are kept, so a reader that comes later (a reloaded
page, a second device, another process) replays its events from the first and follows it; the route encodes
them for its wire (the UI Message Stream, which `useChat` resumes).

Keeping costs a list append per event: nothing is encoded or written unless a reader asks. A reader in
the process that runs the answer follows it in memory. A reader in another process asks for it with a
NOTIFY on `threadline_resume`; the process running the answer then writes its events, as JSON, to PostgreSQL
(`recorded_events`), every FLUSH_EVERY seconds, all answers asked for in one statement, and the reader polls
for rows. Rows are deleted KEEP_AFTER_END seconds after their answer ended. With the in-memory backend
there is no table, and only this process can resume its answers.

A reader of another process's answer looks every ALIVE_EVERY seconds of silence whether that process is
still alive (answers/active.py knows). When it died mid-answer, `kill -9` included, the replay ends with
the partial and a finish marked `server-stopped`, as the answer's closed turn is stored.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import msgspec
import psycopg
from psycopg.rows import DictRow

from threadline import events as ev
from threadline.storage.fallback import CONNECTION_ERRORS
from threadline.storage.postgres import recorded_events, running_answers
from threadline.storage.saver import Pool

log = logging.getLogger(__name__)

FLUSH_EVERY = 0.1  # seconds between writes of what a running answer added
POLL_EVERY = 0.1  # seconds between reads of another process's recording
KEEP_AFTER_END = 30.0  # seconds a finished recording stays for readers still replaying it
START_WAIT = 2.0  # seconds to wait for the process running an answer to start writing it out
STALE_AFTER = 3600.0  # seconds after which rows an ended process left behind are removed
ALIVE_EVERY = 1.0  # seconds of silence after which a reader looks whether the answer's process still runs it
LiveCheck = Callable[[psycopg.AsyncConnection[DictRow], str], Awaitable[bool]]
Batches = AsyncIterator[list[ev.Event]]  # what a reader follows, batch by batch, until the answer ends
_encode_events = msgspec.json.Encoder().encode
_decode_events = msgspec.json.Decoder(list[ev.AnyEvent]).decode


class Recording:
    """One answer's events as they were sent."""

    def __init__(self, recordings: Recordings, thread_id: str, message_id: str) -> None:
        self.recordings = recordings
        self.thread_id = thread_id
        self.message_id = message_id
        self.events: list[ev.Event] = []
        self.ended = False
        self.shared = False  # a reader in another process asked for it: written to the table
        # What readers following it in this process wait on, made when one waits: an `asyncio.Event` and its deque
        # were 0.8 KB that every running answer held, read or not.
        self._more: asyncio.Future[None] | None = None
        self.written = 0  # how many events are in the table

    def add(self, event: ev.Event) -> None:
        if not self.events:  # the answer started: readers can find it now
            self.recordings.running[self.thread_id] = self
        self.events.append(event)
        if self._more is not None:
            self._changed()
        if self.shared:
            self.recordings.changed(self)

    def end(self) -> None:
        self.ended = True
        self._changed()
        if self.recordings.running.get(self.thread_id) is self:
            del self.recordings.running[self.thread_id]
        if self.shared:
            self.recordings.changed(self)

    async def follow(self) -> Batches:
        """Everything recorded so far, then each new batch until the answer ends."""
        sent = 0
        while True:
            ended, known = self.ended, len(self.events)
            if sent < known:
                yield self.events[sent:known]
                sent = known
            elif ended:
                return
            else:
                if self._more is None:
                    self._more = asyncio.get_running_loop().create_future()
                await asyncio.shield(self._more)  # another reader's going away leaves it to the others

    def _changed(self) -> None:
        more, self._more = self._more, None
        if more is not None and not more.done():
            more.set_result(None)


class Recordings:
    """The recordings of this process's running answers, and the way to read any process's.

    One writer per process: every FLUSH_EVERY seconds, what the answers asked for added goes to the table in
    one multi-row INSERT, so the writes do not grow with the number of answers streaming at once."""

    def __init__(self, pool: Pool | None, runs_in_a_live_process: LiveCheck) -> None:
        """`runs_in_a_live_process(conn, thread_id)`: whether an answer of the thread runs in a live process."""
        self.pool = pool
        self.runs_in_a_live_process = runs_in_a_live_process
        self.running: dict[str, Recording] = {}  # by thread
        self.unwritten: set[Recording] = set()
        self.finished: list[tuple[float, str, str]] = []  # (when, thread, message) of written-out recordings
        self.tasks: set[asyncio.Task[None]] = set()
        self._writer: asyncio.Task[None] | None = None

    def start(self, thread_id: str, message_id: str) -> Recording:
        """A recording for an answer about to start; readers find it once it has its first chunk."""
        return Recording(self, thread_id, message_id)

    def share(self, thread_id: str) -> None:
        """A reader in another process asked for this conversation's running answer: write it out."""
        if (recording := self.running.get(thread_id)) is not None and not recording.shared:
            recording.shared = True
            self.changed(recording)

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
            known = len(recording.events)
            if known > recording.written or recording.ended:
                data = _encode_events(recording.events[recording.written : known])
                rows.append((recording.thread_id, recording.message_id, recording.written, data, recording.ended))
                recording.written = known
            if recording.ended:
                self.finished.append((time.monotonic(), recording.thread_id, recording.message_id))
        self.unwritten.clear()
        now = time.monotonic()
        expired = [(thread, message) for when, thread, message in self.finished if now - when > KEEP_AFTER_END]
        self.finished = [entry for entry in self.finished if now - entry[0] <= KEEP_AFTER_END]
        if not rows and not expired:
            return
        async with self.pool.connection() as conn:
            await recorded_events.write(conn, rows, expired, STALE_AFTER)

    async def resume(self, thread_id: str) -> Batches | None:
        """The answer running in this conversation, from its first event; None when none is running."""
        if (recording := self.running.get(thread_id)) is not None:
            return recording.follow()
        if self.pool is None:
            return None
        async with self.pool.connection() as conn:
            # Running in another live process? Ask it to write the answer out (rows appear within FLUSH_EVERY).
            if not await self.runs_in_a_live_process(conn, thread_id):
                return None
            await running_answers.notify(conn, running_answers.RESUME_CHANNEL, thread_id)
        for _ in range(int(START_WAIT / POLL_EVERY)):
            await asyncio.sleep(POLL_EVERY)
            async with self.pool.connection() as conn:
                newest = await recorded_events.latest(conn, thread_id)
            if newest is not None and not newest[1]:
                return self._poll(thread_id, newest[0])
        return None

    async def _poll(self, thread_id: str, message_id: str) -> Batches:
        """Another process's recording: its rows so far, then new ones as they are written; ended for it when
        that process is gone (after one more read, for what it wrote just before its answer ended)."""
        assert self.pool is not None, "polled only with a database"
        seq, quiet, gone, sent = -1, 0.0, False, list[ev.Event]()
        while True:
            async with self.pool.connection() as conn:
                rows = await recorded_events.after(conn, thread_id, message_id, seq)
                quiet = 0.0 if rows else quiet + POLL_EVERY
                if quiet >= ALIVE_EVERY:
                    quiet = 0.0
                    if gone:
                        yield ending(sent)
                        return
                    gone = not await self.runs_in_a_live_process(conn, thread_id)
            for row in rows:
                seq, batch = row["seq"], list[ev.Event](_decode_events(row["data"]))
                sent += batch
                if batch:
                    yield batch
                if row["ended"]:
                    return
            await asyncio.sleep(POLL_EVERY)


def ending(sent: list[ev.Event]) -> list[ev.Event]:
    """The end of a replayed answer whose process died: its open text and reasoning parts closed, and a finish
    marked `server-stopped`, as the answer's closed turn is stored."""
    open_parts: dict[str, ev.Event] = {}
    for event in sent:
        if isinstance(event, ev.TextStart):
            open_parts[event.id] = ev.TextEnd(id=event.id, agent=event.agent)
        elif isinstance(event, ev.ReasoningStart):
            open_parts[event.id] = ev.ReasoningEnd(id=event.id)
        elif isinstance(event, ev.TextEnd | ev.ReasoningEnd):
            open_parts.pop(event.id, None)
    return [
        *open_parts.values(),
        ev.Finish(finish_reason="other", finished_at=ev.timestamp(), interrupted="server-stopped"),
    ]
